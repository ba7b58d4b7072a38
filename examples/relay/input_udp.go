package main

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relaykit/relaykit"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// batchReader is what ipv4.PacketConn and ipv6.PacketConn share: recvmmsg.
type batchReader interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
}

type v6reader struct{ *ipv6.PacketConn }

func (r v6reader) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	return r.PacketConn.ReadBatch(ms, flags)
}

// udpInput reads syslog datagrams in batches (recvmmsg on Linux), one
// message per datagram. Datagrams arriving while the worker ring is full are
// dropped and counted (queue_full): UDP has no backpressure.
//
// A read error (an ICMP error reported on the socket, ENOMEM, ...) never
// stops the input: the reader counts it (relay_input_read_errors_total),
// backs off (5 ms doubling to 1 s, as net/http's Serve does after an
// accept error) and reads again. The first error of an episode is logged,
// and so is the first read that succeeds after it.
type udpInput struct {
	cfg   UDPInputConfig
	conn  *net.UDPConn
	rd    batchReader
	stats *inputStats
	d     *dispatcher
	loc   *time.Location
	log   *slog.Logger

	failing atomic.Bool  // an episode of read errors is under way
	episode atomic.Int64 // read errors in the current episode
}

func listenUDP(cfg UDPInputConfig, stats *inputStats, d *dispatcher, loc *time.Location, log *slog.Logger) (*udpInput, error) {
	addr, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	if cfg.ReadBuffer > 0 {
		if err := setReadBuffer(conn, int(cfg.ReadBuffer)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("input %s: read_buffer: %w", cfg.Name, err)
		}
	}
	in := &udpInput{cfg: cfg, conn: conn, stats: stats, d: d, loc: loc, log: log.With("input", cfg.Name)}
	if addr.IP == nil || addr.IP.To4() != nil {
		in.rd = ipv4.NewPacketConn(conn)
	} else {
		in.rd = v6reader{ipv6.NewPacketConn(conn)}
	}
	return in, nil
}

// Addr is the bound address.
func (u *udpInput) Addr() net.Addr { return u.conn.LocalAddr() }

// Run reads until ctx ends, with Readers goroutines on the socket.
func (u *udpInput) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { u.conn.Close() })
	defer stop()
	errs := make(chan error, u.cfg.Readers)
	for range u.cfg.Readers {
		go func() { errs <- u.read(ctx) }()
	}
	var err error
	for range u.cfg.Readers {
		if e := <-errs; e != nil && err == nil {
			err = e
			u.conn.Close() // stop the other readers too
		}
	}
	return err
}

// read is one reader: recvmmsg batches, parse, hand to the rings.
func (u *udpInput) read(ctx context.Context) error {
	n := u.cfg.BatchSize
	ms := make([]ipv4.Message, n)
	size := int(u.cfg.MaxMessageSize)
	backing := make([]byte, n*size)
	for i := range ms {
		ms[i].Buffers = [][]byte{backing[i*size : (i+1)*size : (i+1)*size]}
	}
	sp := newSyslogParser(u.loc)
	// The last sender's address, as a string and a shard key: senders send
	// in bursts, so most datagrams skip formatting and hashing it.
	var lastAddr netip.AddrPort
	var peer string
	var shard uint64
	var backoff time.Duration // since the last read that succeeded
	for {
		k, err := u.rd.ReadBatch(ms, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("input %s: read: %w", u.cfg.Name, err)
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			u.readFailed(err, backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if u.failing.Load() { // one load per batch
			u.readRecovered()
		}
		for i := range k {
			m := &ms[i]
			data := m.Buffers[0][:m.N]
			if ua, ok := m.Addr.(*net.UDPAddr); ok {
				if ap := ua.AddrPort(); ap != lastAddr {
					lastAddr, peer = ap, ap.Addr().Unmap().String()
					shard = maphash.Comparable(shardSeed, ap)
				}
			}
			u.stats.bytes.Add(int64(len(data)))
			ev := newEvent()
			sp.Parse(ev, data, peer)
			if m.Flags&syscall.MSG_TRUNC != 0 {
				ev.Flags |= relaykit.FlagTruncated
				u.stats.truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				u.stats.parseErrors.Add(1)
			}
			u.d.TryPushOwned(shard, ev, u.stats)
		}
	}
}

// readFailed counts a read error and logs the first of an episode.
func (u *udpInput) readFailed(err error, backoff time.Duration) {
	u.stats.readErrors.Add(1)
	u.episode.Add(1)
	if u.failing.CompareAndSwap(false, true) {
		u.log.Warn("UDP read failed; the input keeps reading after a backoff (further errors are counted in relay_input_read_errors_total, not logged)",
			"err", err, "backoff", backoff)
	}
}

// readRecovered ends an episode of read errors.
func (u *udpInput) readRecovered() {
	if u.failing.CompareAndSwap(true, false) {
		u.log.Info("UDP reads succeed again", "errors", u.episode.Swap(0))
	}
}

// setReadBuffer sets SO_RCVBUF. The kernel caps it at net.core.rmem_max;
// when that cuts the request and the process may (CAP_NET_ADMIN), it uses
// SO_RCVBUFFORCE to get the full size.
func setReadBuffer(conn *net.UDPConn, n int) error {
	if err := conn.SetReadBuffer(n); err != nil {
		return err
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	_ = rc.Control(func(fd uintptr) {
		got, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		if err == nil && got < n { // Linux reports twice the size set
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n)
		}
	})
	return nil
}
