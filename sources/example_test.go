package sources_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// Example tracks three senders: one goes quiet and is reported silent, one
// floods and is limited. A relay runs tr.Run(ctx) on a goroutine instead
// of the Tick calls, and passes its coarse clock; here a manual clock
// stands in for both.
func Example() {
	clk := clock.NewFake(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	tr, err := sources.New(sources.Config{
		Clock: clk,
		Policy: sources.Policy{
			SilentAfter: 5 * time.Minute,
			RateLimit:   sources.Limit{EventsPerSecond: 100}, // burst: 100
		},
		Hooks: sources.Hooks{OnTransition: func(tr sources.Transition) {
			var e relaykit.Event // a relay pushes this into its pipeline
			tr.FillEvent(&e)
			fmt.Printf("%s %s: %s\n", e.SourceType, e.Host, e.Raw)
		}},
	})
	if err != nil {
		panic(err)
	}
	fw, db, noisy := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")

	tr.Tick() // the first tick (or Run) starts the time for silence
	for range 10 {
		tr.ObserveAddr(fw, 1, 120) // a datagram input: one call per datagram
		tr.ObserveAddr(db, 1, 300)
	}
	conn := tr.Addr(noisy) // a stream input: one Handle per connection
	allowed := conn.Allow(1000, 150_000)
	fmt.Println("noisy: allowed", allowed, "of 1000")

	for range 6 { // six minutes; db goes quiet
		clk.Add(time.Minute)
		tr.ObserveAddr(fw, 1, 120)
		tr.Tick()
	}
	for _, s := range tr.Sources(nil, sources.Query{By: sources.ByEvents}) {
		fmt.Printf("%-9s %-6s events=%d dropped=%d\n", s.Key, s.State, s.Events, s.Dropped)
	}
	// Output:
	// noisy: allowed 100 of 1000
	// relay:source_health 192.0.2.2: source 192.0.2.2 is silent: last seen 2026-05-01T10:00:00Z, silent for 360 s, 10 events before
	// relay:source_health 192.0.2.3: source 192.0.2.3 is silent: last seen 2026-05-01T10:00:00Z, silent for 360 s, 1000 events before
	// 192.0.2.3 silent events=1000 dropped=900
	// 192.0.2.1 active events=16 dropped=0
	// 192.0.2.2 silent events=10 dropped=0
}

// ExampleInput_Conn paces a stream connection: the handler charges each
// read's events before reading again, and a sender over its limit waits
// (TCP flow control holds it back; nobody else waits). Here a frozen clock
// stands in for the relay's coarse clock: the sender's third read is over
// its rate (1,200 events against a burst of 1,000), and the context, which
// in a relay ends with the connection, cuts the wait short.
func ExampleInput_Conn() {
	clk := clock.NewFake(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	tr, err := sources.New(sources.Config{
		Clock:  clk,
		Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 1000, Burst: 1000}},
	})
	if err != nil {
		panic(err)
	}
	in := tr.Input("syslog_tcp")

	// In the connection's goroutine:
	c := in.Conn(netip.MustParseAddr("192.0.2.7"), sources.ConnConfig{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	for read := range 3 {
		if err := c.BeforeRead(ctx); err != nil { // waits while the sender is over its rate
			fmt.Println("read", read, "held back:", err)
			break
		}
		for range 600 { // the frames of one read
			c.Event(nil, 200)
		}
	}
	s, _ := tr.Source(sources.ParseKey("192.0.2.7"))
	fmt.Println(s.Events, "events from", s.Key, "via", s.Input)
	// Output:
	// read 2 held back: context deadline exceeded
	// 1200 events from 192.0.2.7 via syslog_tcp
}
