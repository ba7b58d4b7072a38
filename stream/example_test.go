package stream_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/relaykit/relaykit/stream"
)

// A framer reads octet-counted syslog frames; the framing is decided by the
// first frame and kept, so a message that does not start with '<' is still
// one frame.
func ExampleFramer() {
	in := "26 <13>1 - host app - - - one8 no PRI 226 <13>1 - host app - - - two"
	f := stream.NewFramer(strings.NewReader(in), stream.FramerConfig{})
	for {
		frame, _, err := f.Next()
		if err == io.EOF {
			break
		}
		fmt.Printf("%q\n", frame)
	}
	fmt.Println(f.Framing())
	// Output:
	// "<13>1 - host app - - - one"
	// "no PRI 2"
	// "<13>1 - host app - - - two"
	// octet-counting
}

// On an LF-terminated connection a NUL inside a message is data; oversized
// frames are cut and what is thrown away is counted.
func ExampleFramer_Stats() {
	in := "<13>first\n<13>a\x00b\n\n<13>" + strings.Repeat("x", 30) + "\n<13>c\n"
	f := stream.NewFramer(strings.NewReader(in), stream.FramerConfig{MaxFrame: 16})
	for {
		frame, fl, err := f.Next()
		if err != nil {
			break
		}
		fmt.Printf("%q truncated=%v\n", frame, fl&stream.Truncated != 0)
	}
	s := f.Stats()
	fmt.Printf("frames=%d nul=%d empty=%d discarded=%d bytes\n", s.Frames, s.NULFrames, s.EmptyFrames, s.DiscardedBytes)
	// Output:
	// "<13>first" truncated=false
	// "<13>a\x00b" truncated=false
	// "<13>xxxxxxxxxxxx" truncated=true
	// "<13>c" truncated=false
	// frames=4 nul=1 empty=1 discarded=18 bytes
}

// A listener runs a handler per connection under the default limits and
// deadlines; the handler frames what the connection sends.
func ExampleListener() {
	ctx, cancel := context.WithCancel(context.Background())
	frames := make(chan string)
	done := make(chan error)
	ln, err := stream.New(stream.Config{
		Name:    "syslog",
		Address: "127.0.0.1:0", // port 0: a free one, ln.Addr() says which
		Handler: func(c *stream.Conn) {
			f := stream.NewFramer(c, stream.FramerConfig{})
			for {
				frame, _, err := f.Next()
				if err != nil {
					return
				}
				frames <- string(frame)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	go func() { done <- ln.Serve(ctx) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "<13>hello\n<13>world\n")
	fmt.Println(<-frames)
	fmt.Println(<-frames)
	c.Close()
	cancel()
	fmt.Println(<-done, ln.Stats().Accepted)
	// Output:
	// <13>hello
	// <13>world
	// <nil> 1
}

// Framers of many connections share a ReadBudget: each reads up to
// ReadSize at a time while data waits, and BeforeRead hands on the frames
// of one read together, before the framer reads (and maybe waits) again.
func ExampleReadBudget() {
	budget, err := stream.NewReadBudget(16 << 20) // for all connections
	if err != nil {
		panic(err)
	}
	in := strings.Repeat("<13>1 - host app - - - hello\n", 10000) // 290 kB
	var batch, batches int
	f := stream.NewFramer(strings.NewReader(in), stream.FramerConfig{
		ReadSize: 64 << 10,
		Budget:   budget,
		BeforeRead: func() error {
			if batch > 0 {
				batches++ // hand the batch on here
				batch = 0
			}
			return nil
		},
	})
	defer f.Release() // the buffer goes back to the budget
	frames := 0
	for {
		_, _, err := f.Next()
		if err != nil {
			break
		}
		frames++
		batch++
	}
	fmt.Printf("%d frames in %d batches, %d reads; buffer %d KiB\n", frames, batches, f.Stats().Reads, budget.InUse()>>10)
	// Output:
	// 10000 frames in 8 batches, 9 reads; buffer 64 KiB
}

// Behind a load balancer that sends PROXY headers (HAProxy's send-proxy,
// nginx's proxy_protocol, an NLB's proxy protocol v2), the listener reads
// the header of each connection from the balancers' addresses and the
// sender it names is the connection's source: for MaxConnsPerSource, and
// for whatever the handler keys by Source or RemoteAddr.
func ExampleListener_proxyProtocol() {
	balancers, err := stream.ParseProxyAllowed([]string{"127.0.0.1", "10.0.0.0/8"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lines := make(chan string)
	done := make(chan error)
	ln, err := stream.New(stream.Config{
		Name:          "syslog",
		Address:       "127.0.0.1:0",
		ProxyProtocol: stream.ProxyRequired,
		ProxyAllowed:  balancers,
		Handler: func(c *stream.Conn) {
			f := stream.NewFramer(c, stream.FramerConfig{})
			for {
				frame, _, err := f.Next()
				if err != nil {
					return
				}
				lines <- fmt.Sprintf("source=%s remote=%s frame=%q", c.Source(), c.RemoteAddr(), frame)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	go func() { done <- ln.Serve(ctx) }()
	// What the balancer sends: a version 1 header, then the sender's bytes.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "PROXY TCP4 192.0.2.10 192.0.2.1 51234 514\r\n<13>hello\n")
	fmt.Println(<-lines)
	c.Close()
	cancel()
	<-done
	s := ln.Stats()
	fmt.Printf("proxy_headers=%d refused=%d\n", s.ProxyHeaders, s.ProxyNotAllowed+s.ProxyMalformed+s.ProxyMissing+s.ProxyTimeout)
	// Output:
	// source=192.0.2.10 remote=192.0.2.10:51234 frame="<13>hello"
	// proxy_headers=1 refused=0
}
