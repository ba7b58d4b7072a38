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
	ln, err := stream.Listen("tcp", "127.0.0.1:0", stream.Config{Name: "syslog"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	frames := make(chan string)
	done := make(chan error)
	go func() {
		done <- ln.Serve(ctx, func(c *stream.Conn) {
			f := stream.NewFramer(c, stream.FramerConfig{})
			for {
				frame, _, err := f.Next()
				if err != nil {
					return
				}
				frames <- string(frame)
			}
		})
	}()
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
