package sources

import (
	"context"
	"net/netip"
	"time"
)

// ConnConfig says how a [Conn] keys and limits a stream connection's
// events.
type ConnConfig struct {
	// ByHost keys each event by the host it names (devices behind another
	// relay or a load balancer) instead of the connection's address.
	ByHost bool
	// Drop refuses the events over their key's rate limit ([Conn.Event]
	// returns false) instead of pacing the connection.
	Drop bool
}

// Conn is one stream connection's view of an [Input]: statistics and rate
// limits charged per read rather than per event where it can be. Keyed by
// the connection's address (its one sender) and pacing, [Conn.Event] adds
// two integers and [Conn.BeforeRead] charges the read's events at once,
// waiting as long as the limit asks before the connection is read again:
// TCP flow control holds back that sender alone. Keyed by host, or
// dropping, each event is charged as it comes.
//
// A nil *Conn is valid: it allows everything and waits for nothing, so a
// connection handler can hold one that is nil when tracking is off.
//
// A Conn belongs to the connection's goroutine: it is not safe for
// concurrent use. It allocates nothing after [Input.Conn].
type Conn struct {
	in     Input
	h      Handle // keyed by address
	byHost bool
	drop   bool
	each   bool // byHost || drop: events charged one by one

	events, bytes int           // since the last read, not charged yet
	wait          time.Duration // pace: owed before the next read
	timer         *time.Timer
}

// Conn returns the view of a stream connection from src, or nil when in's
// Tracker is nil (tracking off). Call [Conn.Close] when the connection
// ends.
func (in Input) Conn(src netip.Addr, cfg ConnConfig) *Conn {
	if in.t == nil {
		return nil
	}
	c := &Conn{in: in, byHost: cfg.ByHost, drop: cfg.Drop, each: cfg.ByHost || cfg.Drop}
	if !c.byHost {
		c.h = in.Addr(src)
	}
	return c
}

// Event counts one event of n bytes naming host (read only with
// ConnConfig.ByHost; not retained) and reports whether it may be passed on.
// False means it is over its key's rate limit in drop mode: the caller
// drops it and counts it (relaykit.ReasonRateLimit); the key counted it as
// dropped already. The common case (keyed by address, pacing) is cheap
// enough to inline into a connection's read loop.
func (c *Conn) Event(host []byte, n int) bool {
	if c != nil && !c.each {
		c.events++
		c.bytes += n
		return true
	}
	return c.eventEach(host, n)
}

// eventEach is Event for a nil c, and for a connection whose events are
// charged one by one.
func (c *Conn) eventEach(host []byte, n int) bool {
	if c == nil {
		return true
	}
	if c.drop {
		if c.byHost {
			return c.in.AllowHost(host, 1, n) == 1
		}
		return c.h.Allow(1, n) == 1
	}
	h := c.in.Host(host)
	c.wait += h.Pace(1, n)
	return true
}

// BeforeRead charges the events counted since the last read and, pacing,
// waits as long as their keys' limits ask before the connection is read
// again. It returns ctx.Err() when ctx ends the wait early, nil otherwise.
// Call it before each read of the connection.
func (c *Conn) BeforeRead(ctx context.Context) error {
	if c == nil || (c.events == 0 && c.wait <= 0) {
		return nil
	}
	return c.charge(ctx)
}

// charge is BeforeRead's work.
func (c *Conn) charge(ctx context.Context) error {
	if c.events > 0 {
		c.wait += c.h.Pace(c.events, c.bytes)
		c.events, c.bytes = 0, 0
	}
	if c.wait <= 0 {
		return nil
	}
	d := c.wait
	c.wait = 0
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return nil
	case <-ctx.Done():
		c.timer.Stop()
		return ctx.Err()
	}
}

// Close counts what the connection's last read left uncharged (without
// waiting) and stops the Conn's timer. Call it once, when the connection
// ends; a nil c does nothing.
func (c *Conn) Close() {
	if c == nil {
		return
	}
	if c.events > 0 {
		c.h.Observe(c.events, c.bytes)
		c.events, c.bytes = 0, 0
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}
