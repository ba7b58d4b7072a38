package input_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

// A syslog input mounted on a TCP listener and a UDP listener hands what
// they receive to an engine. At shutdown the listeners stop first, and
// their connections hand over what they read while the engine still
// runs; then the engine routes it all.
func ExampleSyslog() {
	got := make(chan string, 2)
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			got <- fmt.Sprintf("host=%s app=%s msg=%q", batch[i].Host, batch[i].Source, batch[i].Raw)
		}
		return nil
	})
	eng, err := engine.New(engine.Config{Sink: sink, BatchMaxWait: time.Millisecond})
	if err != nil {
		panic(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(context.Background()) }()

	in, err := input.NewSyslog(input.SyslogConfig{Input: eng.NewInput("syslog"),
		Parser: syslog.Config{Location: time.UTC, RequireText: true, CEF: true}})
	if err != nil {
		panic(err)
	}
	tcp, err := stream.New(stream.Config{Name: "syslog", Address: "127.0.0.1:0", Handler: in.ServeConn})
	if err != nil {
		panic(err)
	}
	dgram, err := udp.New(udp.Config{Name: "syslog", Address: "127.0.0.1:0", Handler: in.ServeDatagrams})
	if err != nil {
		panic(err)
	}
	ctx, stopListening := context.WithCancel(context.Background())
	served := make(chan error, 2)
	go func() { served <- tcp.Serve(ctx) }()
	go func() { served <- dgram.Serve(ctx) }()

	c, _ := net.Dial("tcp", tcp.Addr().String())
	fmt.Fprint(c, "<34>1 2026-11-28T12:00:00Z web-1 sshd 42 - - login failed\n")
	fmt.Println(<-got)
	u, _ := net.Dial("udp", dgram.Addr().String())
	fmt.Fprint(u, "<13>Nov 28 12:00:01 cron[7]: job done") // no host: the sender's address
	fmt.Println(<-got)

	stopListening() // 1: stop reading; what was read is handed over
	<-served
	<-served
	_ = eng.Shutdown(context.Background()) // 2: route what the engine holds
	<-ran
	c.Close()
	u.Close()
	fmt.Printf("connections=%d datagrams=%d\n", in.Stats().Connections, in.Stats().Datagrams)
	// Output:
	// host=web-1 app=sshd msg="login failed"
	// host=127.0.0.1 app=cron msg="job done"
	// connections=1 datagrams=1
}
