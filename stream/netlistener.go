package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// NetListener is a [Listener] seen as a net.Listener, for a server that
// runs its own accept loop and connection goroutines: net/http's Server
// above all (package stream/hec's Handler is served this way, with
// stream/streamhttp's ConnState as the server's ConnState hook).
// [Listener.NetListener] returns it.
//
// Its Accept admits connections under the listener's limits, as
// [Listener.Serve] does: [Config].MaxConnsPerSource, then
// [Config].MaxConns with eviction of the longest-idle connection (or
// refusal with RefuseWhenFull), counted in the listener's [Stats]. A
// refused connection is closed at once and Accept goes on to the next,
// so the server never sees it. Each connection Accept returns holds its
// slot until it is closed.
//
// # Idle and busy
//
// A connection is idle, and may be evicted for a newcomer, from accept
// until it receives data (after the TLS handshake, for a TLS listener),
// and again from when the server marks it idle with [NetListener.SetIdle]
// until data arrives. Otherwise it is busy and never evicted: for HTTP a
// request is in flight, and closing its connection would lose it. net/http
// reports this through http.Server.ConnState: mark a connection idle on
// http.StateIdle (a kept-alive connection between requests) and busy on
// http.StateActive and http.StateHijacked, which is what streamhttp.ConnState
// does. Without the hook a connection is idle only until its first byte
// arrives, so it is never evicted once used: safe, but full listeners
// then refuse newcomers instead (Stats.RefusedFull). An HTTP/2 connection
// (on which net/http runs no ConnState hooks) is busy from its first byte.
//
// # Deadlines
//
// The server sets its connections' deadlines itself (net/http: its
// ReadHeaderTimeout, IdleTimeout and the handlers' own, such as
// hec.Config.BodyTimeout), so [Config].IdleTimeout and
// [Config].FrameTimeout do not apply here. A read that fails on a deadline
// the server set in the future (not one set in the past to interrupt a
// read) is counted once per connection: in [Stats].CutIdle when the
// connection was idle (nothing received since accept or since it was
// marked idle: net/http's IdleTimeout, or its ReadHeaderTimeout on a
// connection that sends nothing), in [Stats].CutFrameTimeout otherwise (a
// request's headers or body that did not arrive in time). net/http closes
// the connection after either.
//
// # TLS
//
// For a listener with [Config].TLS, Accept returns a *tls.Conn (so that
// net/http fills Request.TLS and negotiates HTTP/2 when the config offers
// "h2"), whose handshake a goroutine of the listener starts at once under
// [Config].HandshakeTimeout, measured from accept. Until the handshake
// is over, deadlines the server sets are recorded and applied after it,
// so the server's own handshake timeout neither extends nor shortens
// HandshakeTimeout. A handshake cut by it closes the connection
// ([Stats].CutHandshakeTimeout); one that fails otherwise is counted in
// [Stats].HandshakeErrors and left to the server to close (net/http
// answers a client that speaks plain HTTP with a 400 first). The goroutine
// ends with the handshake, within HandshakeTimeout.
//
// # PROXY protocol
//
// With [Config].ProxyProtocol, a goroutine of the NetListener accepts
// (started by the first Accept, ended by Close) and each connection's
// PROXY header is read in a goroutine of its own under HandshakeTimeout;
// Accept returns a connection only once its header was read and applied,
// so that the server sees the source the header named from the start:
// as RemoteAddr in http.Server's ConnContext and ConnState hooks, in
// Request.RemoteAddr, in gRPC's peer. A connection the PROXY stage
// refuses (see [Stats].ProxyNotAllowed) is closed without the server
// ever seeing it, as one refused at accept is. Accept errors are then
// handled by the NetListener as [Listener.Serve] handles them (a wait of
// 5 ms, doubling up to 1 s) and not returned to the server. The TLS
// handshake, if any, runs after the header, under the same deadline.
//
// [Stats].BytesRead does not count the connections of a NetListener.
//
// Use either [Listener.Serve] or a NetListener on a listener, not both,
// and one NetListener per listener. A NetListener's methods are safe for
// concurrent use.
type NetListener struct {
	l       *Listener
	once    sync.Once
	err     error
	episode atomic.Int64 // accept errors since the last accept that succeeded

	// With ProxyProtocol: connections come from the accept loop's
	// goroutine through their header goroutines.
	start    sync.Once
	ready    chan net.Conn // connections whose header was read
	closed   chan struct{} // closed by Close
	loopDone chan struct{} // closed when the accept loop ends
	loopErr  error         // why it ended; set before loopDone is closed
	wg       sync.WaitGroup
	pmu      sync.Mutex
	pending  map[*netConn]struct{} // header not read yet; nil once closed
}

var _ net.Listener = (*NetListener)(nil)

// NetListener returns l as a net.Listener for a server that accepts and
// serves connections itself, such as net/http's Server; see
// [NetListener]. Closing it stops accepting and leaves the connections to
// the server (http.Server.Shutdown closes its listeners first and then
// waits for the requests in flight); [Listener.Close] closes it too and
// also ends every connection's reads.
func (l *Listener) NetListener() *NetListener {
	nl := &NetListener{l: l}
	if l.proxy != ProxyOff {
		nl.ready, nl.closed, nl.loopDone = make(chan net.Conn), make(chan struct{}), make(chan struct{})
		nl.pending = map[*netConn]struct{}{}
	}
	return nl
}

// Addr is the listener's network address.
func (nl *NetListener) Addr() net.Addr { return nl.l.ln.Addr() }

// Close stops accepting: Accept returns an error wrapping net.ErrClosed.
// Open connections are left as they are, except (with
// [Config].ProxyProtocol) those whose PROXY header was not read yet,
// which no server has seen: Close closes them and waits for the
// NetListener's goroutines. Close is idempotent: every call returns the
// error of closing the socket, nil if it closed or was closed already.
func (nl *NetListener) Close() error {
	nl.once.Do(func() {
		if err := nl.l.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			nl.err = err
		}
		if nl.closed == nil {
			return
		}
		close(nl.closed)
		nl.pmu.Lock()
		pending := nl.pending
		nl.pending = nil
		nl.pmu.Unlock()
		for nc := range pending {
			nc.c.end(ErrClosed)
			_ = nc.Close()
		}
		nl.wg.Wait()
	})
	return nl.err
}

// Accept waits for and returns the next connection admitted under the
// listener's limits (see [NetListener]). Its errors are the socket's own,
// unwrapped, so that the server backs off on temporary ones (EMFILE) as
// net/http's Server does; they count in [Stats].AcceptErrors and
// AcceptFailing (the first of an episode is logged, as is its end). After
// Close or [Listener.Close] they wrap net.ErrClosed. For a TLS listener
// the connection is a *tls.Conn whose handshake has started.
//
// With [Config].ProxyProtocol, Accept returns connections whose PROXY
// header was read (see [NetListener]), and errors only once the listener
// is closed.
func (nl *NetListener) Accept() (net.Conn, error) {
	l := nl.l
	if nl.ready != nil {
		return nl.acceptProxied()
	}
	for {
		raw, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				l.acceptErrors.Add(1)
				nl.episode.Add(1)
				if !l.acceptFailing.Swap(true) {
					l.log.Warn("accept failing, the server retries with its backoff; new connections wait in the backlog", "input", l.name, "error", err)
				}
			}
			return nil, err
		}
		if l.acceptFailing.Load() && l.acceptFailing.Swap(false) {
			l.log.Info("accepting again", "input", l.name, "accept_errors", nl.episode.Swap(0))
		}
		c := l.admit(raw)
		if c == nil {
			continue // refused and closed, counted
		}
		nc := &netConn{Conn: raw, c: c, l: l}
		if l.tls == nil {
			return nc, nil
		}
		nc.handshaking.Store(true)
		_ = raw.SetDeadline(time.Now().Add(l.handshake))
		tc := tls.Server(nc, l.tls)
		go nc.handshake(tc)
		return tc, nil
	}
}

// SetIdle marks c, a connection Accept returned (or a *tls.Conn, or any
// connection with a NetConn method, over one), idle or busy; see
// [NetListener]. Marked idle, it may be evicted for a newcomer until
// data arrives on it; marked busy, it is not. SetIdle ignores connections
// of other listeners.
func (nl *NetListener) SetIdle(c net.Conn, idle bool) {
	nc := nl.conn(c)
	if nc == nil {
		return
	}
	if idle {
		nc.c.waiting.Store(time.Now().UnixNano())
	} else {
		nc.c.waiting.Store(0)
	}
}

// conn finds the netConn of nl under c and the connections c wraps.
func (nl *NetListener) conn(c net.Conn) *netConn {
	for range 8 {
		switch v := c.(type) {
		case *netConn:
			if v.l != nl.l {
				return nil
			}
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// netConn is a connection handed out by a NetListener: the accepted
// connection, registered with the listener as c.
type netConn struct {
	net.Conn // the accepted connection

	c *Conn // its registration: source, idle time, why the listener ended it
	l *Listener

	pre           []byte   // read past a PROXY header, to be read first
	remote, local net.Addr // named by a PROXY header

	handshaking atomic.Bool // the PROXY header or the TLS handshake is in progress
	mu          sync.Mutex  // guards rdl and wdl, and applying deadlines against the end of the handshake
	rdl, wdl    time.Time   // the deadlines the server set
	future      atomic.Bool // the read deadline in force was in the future when set
	cut         atomic.Bool // a cut was counted
	closed      atomic.Bool
}

// Read reads from the connection. A read that returns data marks the
// connection busy; a read that fails on the server's deadline is counted
// as a cut (see [NetListener]). Once the listener ended the connection
// (eviction, [Listener.Close]) it returns [ErrEvicted] or [ErrClosed].
func (c *netConn) Read(p []byte) (int, error) {
	if err := c.c.ended(); err != nil {
		return 0, err
	}
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		if c.c.waiting.Load() != 0 && !c.handshaking.Load() {
			c.c.waiting.Store(0)
		}
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if n > 0 && c.c.waiting.Load() != 0 && !c.handshaking.Load() {
		c.c.waiting.Store(0)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if why := c.c.ended(); why != nil {
			return n, why
		}
		// Cheap checks first: an interrupted read (net/http ends each
		// request's background read so) is not a cut, and isTimeout
		// allocates.
		if c.future.Load() && !c.handshaking.Load() && !c.cut.Load() && isTimeout(err) && c.cut.CompareAndSwap(false, true) {
			if c.c.waiting.Load() != 0 {
				c.l.cutIdle.Add(1)
			} else {
				c.l.cutFrame.Add(1)
			}
		}
	}
	return n, err
}

// RemoteAddr is the peer's address: the source a PROXY header named, if
// one did.
func (c *netConn) RemoteAddr() net.Addr {
	if c.remote != nil {
		return c.remote
	}
	return c.Conn.RemoteAddr()
}

// LocalAddr is the local address: the destination a PROXY header named,
// if one did.
func (c *netConn) LocalAddr() net.Addr {
	if c.local != nil {
		return c.local
	}
	return c.Conn.LocalAddr()
}

// SetDeadline sets the read and write deadlines; see SetReadDeadline.
func (c *netConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl, c.wdl = t, t
	c.future.Store(!t.IsZero() && time.Until(t) > 0)
	if c.handshaking.Load() {
		return nil // applied when the handshake is over
	}
	err := c.Conn.SetDeadline(t)
	c.keepEnded()
	return err
}

// SetReadDeadline sets the read deadline, or records it until the TLS
// handshake is over (which has its own deadline, HandshakeTimeout).
func (c *netConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl = t
	c.future.Store(!t.IsZero() && time.Until(t) > 0)
	if c.handshaking.Load() {
		return nil
	}
	err := c.Conn.SetReadDeadline(t)
	c.keepEnded()
	return err
}

// SetWriteDeadline sets the write deadline, or records it until the TLS
// handshake is over.
func (c *netConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	if c.handshaking.Load() {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

// keepEnded keeps the reads of a connection the listener ended failing
// at once: [Listener.Close] moved the read deadline to now, which a
// deadline set since must not undo. c.mu is held.
func (c *netConn) keepEnded() {
	if c.c.ended() != nil {
		_ = c.Conn.SetReadDeadline(time.Now())
	}
}

// CloseWrite shuts down the writing side of a TCP connection (net/http
// does before closing a connection whose request it did not read whole).
func (c *netConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes the connection and gives its slot back to the listener.
func (c *netConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.mu.Lock()
		c.l.removeLocked(c.c)
		c.l.mu.Unlock()
		c.l.wg.Done()
	}
	return err
}

// handshake runs the TLS handshake under the deadline Accept set, then
// applies the deadlines the server set meanwhile. The server's own call
// to Handshake waits for it and returns the same result.
func (c *netConn) handshake(tc *tls.Conn) {
	err := tc.HandshakeContext(context.Background())
	c.mu.Lock()
	c.handshaking.Store(false)
	if err == nil {
		_ = c.Conn.SetReadDeadline(c.rdl)
		_ = c.Conn.SetWriteDeadline(c.wdl)
		c.keepEnded()
	}
	c.mu.Unlock()
	if err == nil {
		return
	}
	switch {
	case c.c.ended() != nil:
		// Evicted, or the listener closed.
	case isTimeout(err):
		c.l.cutHandshake.Add(1)
		_ = c.Close()
	case errors.Is(err, net.ErrClosed):
		// The server closed the connection.
	default:
		c.l.handshakeErrors.Add(1)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// acceptProxied is Accept with ProxyProtocol: the connections come from
// the accept loop through their header goroutines.
func (nl *NetListener) acceptProxied() (net.Conn, error) {
	select {
	case <-nl.closed:
		return nil, fmt.Errorf("stream: %s: accept: %w", nl.l.name, net.ErrClosed)
	default:
	}
	nl.start.Do(func() {
		nl.pmu.Lock()
		defer nl.pmu.Unlock()
		if nl.pending != nil { // not closed: Close waits for the loop
			nl.wg.Add(1)
			go nl.acceptLoop()
		}
	})
	select {
	case c := <-nl.ready:
		return c, nil
	case <-nl.loopDone:
		return nil, nl.loopErr
	case <-nl.closed:
		return nil, fmt.Errorf("stream: %s: accept: %w", nl.l.name, net.ErrClosed)
	}
}

// acceptLoop accepts and admits connections, and starts a goroutine
// reading the PROXY header of each, until the listener is closed.
func (nl *NetListener) acceptLoop() {
	defer nl.wg.Done()
	l := nl.l
	var b acceptBackoff
	for {
		raw, err := l.acceptRetry(&b, nl.closed)
		if err != nil {
			nl.loopErr = fmt.Errorf("stream: %s: accept: %w", l.name, err)
			close(nl.loopDone)
			return
		}
		c := l.admit(raw)
		if c == nil {
			continue // refused and closed, counted
		}
		nc := &netConn{Conn: raw, c: c, l: l}
		nc.handshaking.Store(true) // the server's deadlines wait for the header and the TLS handshake
		_ = raw.SetDeadline(c.start.Add(l.handshake))
		nl.pmu.Lock()
		if nl.pending == nil {
			nl.pmu.Unlock()
			_ = nc.Close()
			continue
		}
		nl.pending[nc] = struct{}{}
		nl.wg.Add(1)
		nl.pmu.Unlock()
		go nl.prelude(nc)
	}
}

// prelude reads the PROXY header of nc, hands the connection to Accept,
// and then runs its TLS handshake, if any.
func (nl *NetListener) prelude(nc *netConn) {
	l := nl.l
	ok := nc.c.ended() == nil
	var p proxied
	if ok {
		p, ok = l.readProxy(nc.c)
	}
	nl.pmu.Lock()
	_, mine := nl.pending[nc]
	delete(nl.pending, nc)
	nl.pmu.Unlock()
	if !ok || !mine {
		_ = nc.Close()
		nl.wg.Done()
		return
	}
	nc.pre, nc.remote, nc.local = p.pre, p.remote, p.local
	var out net.Conn = nc
	var tc *tls.Conn
	if l.tls != nil {
		tc = tls.Server(nc, l.tls)
		out = tc
	} else {
		nc.mu.Lock()
		nc.handshaking.Store(false)
		_ = nc.Conn.SetDeadline(time.Time{})
		nc.keepEnded()
		nc.mu.Unlock()
	}
	select {
	case nl.ready <- out:
	case <-nl.closed:
		_ = nc.Close()
		nl.wg.Done()
		return
	case <-l.done:
		_ = nc.Close()
		nl.wg.Done()
		return
	}
	nl.wg.Done() // the server has it; Close does not wait for its handshake
	if tc != nil {
		nc.handshake(tc)
	}
}
