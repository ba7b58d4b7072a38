package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
)

// streamListener accepts connections for a stream input (syslog TCP/TLS or
// JSON lines), enforcing max connections and the idle timeout, and runs
// handle for each connection in its own goroutine. On shutdown it stops
// accepting, interrupts reads (frames already read are still handled), and
// waits for every connection goroutine.
type streamListener struct {
	name     string
	ln       net.Listener
	maxConns int
	idle     time.Duration
	stats    *inputStats
	log      *slog.Logger
	handle   func(ctx context.Context, c *trackedConn)

	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	closing bool
	full    bool // refusing at maxConns (logged once per episode)
	wg      sync.WaitGroup
}

// trackedConn is a connection whose reads extend the idle deadline, until
// shutdown stops them.
type trackedConn struct {
	net.Conn
	idle    time.Duration
	closing atomic.Bool
	shard   uint64
	peer    string
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if c.closing.Load() {
		return 0, io.ErrUnexpectedEOF
	}
	if c.idle > 0 {
		_ = c.SetReadDeadline(time.Now().Add(c.idle))
		if c.closing.Load() {
			// Shutdown set its deadline between our check and ours: restore it.
			_ = c.SetReadDeadline(time.Now())
		}
	}
	return c.Conn.Read(p)
}

var shardSeed = maphash.MakeSeed()

func listenStream(name, addr string, tlsCfg *TLSConfig, maxConns int, idle time.Duration, stats *inputStats, log *slog.Logger) (*streamListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", name, err)
	}
	if tlsCfg != nil {
		tc, err := serverTLS(tlsCfg)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("input %s: tls: %w", name, err)
		}
		ln = tls.NewListener(ln, tc)
	}
	return &streamListener{name: name, ln: ln, maxConns: maxConns, idle: idle, stats: stats, log: log,
		conns: map[*trackedConn]struct{}{}}, nil
}

func serverTLS(c *TLSConfig) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client_ca_file %s: no certificates", c.ClientCAFile)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// Addr is the bound address.
func (l *streamListener) Addr() net.Addr { return l.ln.Addr() }

// Run accepts until ctx ends, then shuts down as described on the type.
func (l *streamListener) Run(ctx context.Context, work context.Context) error {
	stop := context.AfterFunc(ctx, l.shutdown)
	defer stop()
	var err error
	for {
		c, aerr := l.ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				var ne net.Error
				if errors.As(aerr, &ne) && ne.Timeout() {
					continue
				}
				err = fmt.Errorf("input %s: accept: %w", l.name, aerr)
				l.shutdown()
			}
			break
		}
		tc := &trackedConn{Conn: c, idle: l.idle, peer: hostOf(c.RemoteAddr())}
		tc.shard = maphash.String(shardSeed, c.RemoteAddr().String())
		l.mu.Lock()
		if l.closing || len(l.conns) >= l.maxConns {
			closing := l.closing
			warn := !closing && !l.full
			if !closing {
				l.full = true
			}
			l.mu.Unlock()
			if !closing {
				l.stats.refused.Add(1)
			}
			c.Close()
			if warn {
				l.log.Warn("max connections reached, refusing new ones", "input", l.name, "max", l.maxConns)
			}
			continue
		}
		l.conns[tc] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		l.stats.conns.Add(1)
		l.stats.connsTotal.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() {
				l.mu.Lock()
				delete(l.conns, tc)
				l.full = false
				l.mu.Unlock()
				tc.Conn.Close()
				l.stats.conns.Add(-1)
			}()
			l.handle(work, tc)
		}()
	}
	l.wg.Wait()
	return err
}

func (l *streamListener) shutdown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return
	}
	l.closing = true
	l.ln.Close()
	for c := range l.conns {
		c.closing.Store(true)
		_ = c.SetReadDeadline(time.Now())
	}
}

func hostOf(a net.Addr) string {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case *net.UDPAddr:
		return a.IP.String()
	}
	return a.String()
}

// syslogStream handles one syslog TCP/TLS connection: frames (octet
// counting or LF/NUL, detected per frame), parses and dispatches each.
func syslogStream(in TCPInputConfig, stats *inputStats, d *dispatcher, loc *time.Location) func(context.Context, *trackedConn) {
	return func(ctx context.Context, c *trackedConn) {
		fr := newFramer(c, int(in.MaxMessageSize), true)
		sp := newSyslogParser(loc)
		for {
			frame, cut, err := fr.Next()
			if err != nil {
				return
			}
			ev := newEvent()
			sp.Parse(ev, frame, c.peer)
			if cut {
				ev.Flags |= relaykit.FlagTruncated
				stats.truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				stats.parseErrors.Add(1)
			}
			stats.bytes.Add(int64(len(frame)))
			if err := d.PushOwned(ctx, c.shard, ev, stats); err != nil {
				return
			}
		}
	}
}
