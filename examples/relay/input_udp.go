package main

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream/udp"
)

// udpInput reads syslog datagrams with a stream/udp listener (recvmmsg
// batches, SO_RCVBUF, kernel drops counted), one message per datagram,
// and hands each reader's batch to the engine without waiting: datagrams
// arriving while a worker's ring is full are dropped and counted
// (queue_full), since UDP has no back-pressure. Datagrams the kernel
// dropped because the socket's buffer (read_buffer) was full count as
// received and dropped{rcvbuf_full}. A read error never stops the input
// (the listener backs off and logs once per episode); at shutdown the
// readers first read what the socket holds.
//
// With sources tracked, each datagram counts for its source (the sender's
// address, or the event's host), and a datagram over its source's rate
// limit is dropped, counted as received and dropped{rate_limit}: UDP
// cannot be paced.
type udpInput struct {
	cfg   UDPInputConfig
	ln    *udp.Listener
	stats *inputStats
	// workers is the engine's number of workers: each reader keeps a
	// producer for each.
	workers int
	loc     *time.Location
	// src is the tracker as this input sees it (the zero Input when
	// sources are off: it allows everything); byHost keys by the event's
	// host instead of the sender's address.
	src    sources.Input
	byHost bool
	// readers are Run's, for handle: set before Serve.
	readers []*udpReader
}

// udpDropPoll is how often a UDP input reads its socket's drop count, so
// that drops show when no datagram follows them (zero: the listener's
// default, 1 s; tests change it).
var udpDropPoll time.Duration

func listenUDP(cfg UDPInputConfig, stats *inputStats, workers int, loc *time.Location, src *sourceTracker, log *slog.Logger) (*udpInput, error) {
	u := &udpInput{cfg: cfg, stats: stats, workers: workers, loc: loc, src: src.input(cfg.Name)}
	ln, err := udp.New(udp.Config{
		Name:             cfg.Name,
		Address:          cfg.Listen,
		Handler:          u.handle,
		ReadBuffer:       int(cfg.ReadBuffer),
		MaxMessageSize:   int(cfg.MaxMessageSize),
		BatchSize:        cfg.BatchSize,
		Readers:          cfg.Readers,
		DropPollInterval: udpDropPoll,
		Logger:           log.With("input", cfg.Name),
		Hooks: udp.Hooks{OnKernelDrops: func(n int) {
			stats.kernelDropped.Add(int64(n))
			stats.in.Drop(relaykit.ReasonRcvbufFull, n)
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	stats.udp = ln
	u.ln = ln
	u.byHost = src != nil && src.cfg.keyByHost(cfg.Name)
	return u, nil
}

// Addr is the bound address.
func (u *udpInput) Addr() net.Addr { return u.ln.Addr() }

// Close releases the socket of an input that never ran.
func (u *udpInput) Close() error { return u.ln.Close() }

// udpReader is one reader's state: a parser, a producer per worker, and
// the last sender (senders send in bursts, so most datagrams skip
// formatting and hashing the address).
type udpReader struct {
	sp        *syslogParser
	producers []*engine.Producer
	lastAddr  netip.AddrPort
	peer      string
	p         *engine.Producer // the last sender's worker's
}

// Run reads until ctx ends (then the listener drains the socket) and
// returns nil.
func (u *udpInput) Run(ctx context.Context) error {
	readers := make([]*udpReader, max(u.cfg.Readers, 1))
	for i := range readers {
		r := &udpReader{sp: newSyslogParser(u.loc), producers: make([]*engine.Producer, u.workers)}
		for w := range r.producers {
			r.producers[w] = u.stats.in.NewProducer(uint64(w))
		}
		readers[i] = r
	}
	defer func() {
		for _, r := range readers {
			for _, p := range r.producers {
				p.Release()
			}
		}
	}()
	u.readers = readers
	return u.ln.Serve(ctx)
}

// handle is the listener's handler: the datagrams of one read.
func (u *udpInput) handle(reader int, batch []udp.Datagram) {
	r := u.readers[reader]
	for i := range batch {
		d := &batch[i]
		if d.Addr != r.lastAddr || r.p == nil {
			r.lastAddr, r.peer = d.Addr, d.Addr.Addr().String()
			r.p = r.producers[maphash.Comparable(shardSeed, d.Addr)%uint64(len(r.producers))]
		}
		u.stats.bytes.Add(int64(len(d.Data)))
		if !u.byHost && u.src.AllowAddr(d.Addr.Addr(), 1, len(d.Data)) == 0 {
			u.stats.in.Drop(relaykit.ReasonRateLimit, 1)
			continue
		}
		ev := r.p.Event()
		r.sp.Parse(ev, d.Data, r.peer)
		if u.byHost && u.src.AllowHost(ev.Host, 1, len(d.Data)) == 0 {
			r.p.Unget()
			u.stats.in.Drop(relaykit.ReasonRateLimit, 1)
			continue
		}
		if d.Truncated {
			ev.Flags |= relaykit.FlagTruncated
			u.stats.truncated.Add(1)
		}
		if ev.Flags&relaykit.FlagParseError != 0 {
			u.stats.parseErrors.Add(1)
		}
		if r.p.Full() {
			r.p.TryPush()
		}
	}
	for _, p := range r.producers {
		p.TryPush()
	}
}
