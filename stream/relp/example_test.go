package relp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
)

// A RELP server on a listener answers each syslog frame 200 OK once its
// handler accepted the batch holding it.
func ExampleServer() {
	srv, err := relp.New(relp.Config{Name: "relp", Handler: func(_ context.Context, c *stream.Conn, batch []relp.Message) error {
		for _, m := range batch {
			fmt.Printf("txnr %d: %s\n", m.Txnr, m.Data) // m.Data is valid until we return
		}
		return nil // accepted: the client gets 200 OK for each
	}})
	if err != nil {
		panic(err)
	}
	ln, err := stream.New(stream.Config{Name: "relp", Address: "127.0.0.1:0", Handler: srv.ServeConn})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ln.Serve(ctx) }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	fmt.Fprint(c, "1 open 30 relp_version=0\ncommands=syslog\n")
	line, _ := r.ReadString('\n') // "1 rsp 96 200 OK"
	for !strings.HasPrefix(line, "commands=") {
		line, _ = r.ReadString('\n')
	}
	fmt.Fprint(c, "2 syslog 9 <13>hello\n3 syslog 9 <13>world\n")
	for range 2 {
		line, _ = r.ReadString('\n')
		fmt.Print(line)
	}
	cancel()
	fmt.Println(<-done, srv.Stats().Acked)
	// Output:
	// txnr 2: <13>hello
	// txnr 3: <13>world
	// 2 rsp 6 200 OK
	// 3 rsp 6 200 OK
	// <nil> 2
}
