package udp_test

import (
	"context"
	"fmt"
	"net"

	"github.com/relaykit/relaykit/stream/udp"
)

// A listener hands the datagrams of each read to the handler, which copies
// what it keeps: Data is reused by the next read. The socket buffers what
// arrives from New on.
func Example() {
	got := make(chan string, 2)
	l, err := udp.New(udp.Config{
		Name:    "syslog",
		Address: "127.0.0.1:0",
		Handler: func(_ int, batch []udp.Datagram) {
			for _, d := range batch {
				got <- fmt.Sprintf("%s from %s", d.Data, d.Addr.Addr()) // a copy
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, msg := range []string{"<13>1 - host app - - - first", "<13>1 - host app - - - second"} {
		if _, err := c.Write([]byte(msg)); err != nil {
			fmt.Println(err)
			return
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx) }()
	fmt.Println(<-got)
	fmt.Println(<-got)
	cancel()
	fmt.Println("Serve:", <-done)
	s := l.Stats()
	fmt.Printf("datagrams=%d bytes=%d kernel drops=%d\n", s.Datagrams, s.Bytes, s.KernelDrops)
	// Output:
	// <13>1 - host app - - - first from 127.0.0.1
	// <13>1 - host app - - - second from 127.0.0.1
	// Serve: <nil>
	// datagrams=2 bytes=57 kernel drops=0
}
