package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
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
//
// Datagrams the kernel drops because the socket's receive buffer
// (read_buffer) is full never reach a reader; the socket reports them with
// SO_RXQ_OVFL (socket(7)): each datagram read carries, as a control
// message, the socket's drop count when it was queued. The input counts
// the growth as received and dropped{rcvbuf_full}; every second, and at
// shutdown, it reads the count with SO_MEMINFO too, for drops no datagram
// has followed yet.
//
// When the relay stops, the readers first read what the socket holds (for
// at most udpDrainTime) instead of closing it under them.
type udpInput struct {
	cfg   UDPInputConfig
	conn  *net.UDPConn
	rd    batchReader
	stats *inputStats
	// workers is the engine's number of workers: a reader keeps a
	// producer for each.
	workers int
	loc     *time.Location
	log     *slog.Logger

	failing atomic.Bool  // an episode of read errors is under way
	episode atomic.Int64 // read errors in the current episode

	// kernelDrops is the socket's drop count (a 32-bit kernel counter,
	// widened) as far as the input has accounted for it.
	kernelDrops atomic.Uint64
}

// udpDrainTime bounds how long the readers go on reading what the socket
// holds once the relay stops.
const udpDrainTime = 200 * time.Millisecond

// kernelDropsPoll is how often a UDP input reads its socket's drop count
// with SO_MEMINFO, so drops show even when no datagram follows them (a
// burst, then silence). Zero turns the polling off (tests of the control
// messages).
var kernelDropsPoll = time.Second

// oobSize is the room for one control message: the SO_RXQ_OVFL counter
// (a __u32).
var oobSize = unix.CmsgSpace(4)

func listenUDP(cfg UDPInputConfig, stats *inputStats, workers int, loc *time.Location, log *slog.Logger) (*udpInput, error) {
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
	if err := setSockoptInt(conn, unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1); err != nil {
		conn.Close()
		return nil, fmt.Errorf("input %s: SO_RXQ_OVFL (counting kernel drops): %w", cfg.Name, err)
	}
	in := &udpInput{cfg: cfg, conn: conn, stats: stats, workers: workers, loc: loc, log: log.With("input", cfg.Name)}
	if addr.IP == nil || addr.IP.To4() != nil {
		in.rd = ipv4.NewPacketConn(conn)
	} else {
		in.rd = v6reader{ipv6.NewPacketConn(conn)}
	}
	return in, nil
}

// Addr is the bound address.
func (u *udpInput) Addr() net.Addr { return u.conn.LocalAddr() }

// Run reads until ctx ends, with Readers goroutines on the socket. Then
// the readers read what the socket holds for up to udpDrainTime, the
// kernel's drop count is read a last time, and the socket is closed.
func (u *udpInput) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = u.conn.SetReadDeadline(time.Now().Add(udpDrainTime)) })
	defer stop()
	if every := kernelDropsPoll; every > 0 {
		pollCtx, stopPoll := context.WithCancel(ctx)
		var polling sync.WaitGroup
		defer polling.Wait()
		defer stopPoll()
		polling.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-pollCtx.Done():
					return
				case <-t.C:
					u.countKernelDrops()
				}
			}
		})
	}
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
	if err == nil {
		u.countKernelDrops()
	}
	u.conn.Close()
	return err
}

// noteKernelDrops accounts for the socket's drop count v (SO_RXQ_OVFL or
// SO_MEMINFO, a 32-bit counter that wraps): whatever it grew by since the
// count the input has seen is received and dropped{rcvbuf_full}. Readers
// may report counts out of order; an older one changes nothing.
func (u *udpInput) noteKernelDrops(v uint32) {
	for {
		seen := u.kernelDrops.Load()
		d := int32(v - uint32(seen))
		if d <= 0 {
			return
		}
		if u.kernelDrops.CompareAndSwap(seen, seen+uint64(d)) {
			u.stats.kernelDropped.Add(int64(d))
			u.stats.in.Drop(relaykit.ReasonRcvbufFull, int(d))
			return
		}
	}
}

// countKernelDrops reads the socket's drop count with SO_MEMINFO (Linux
// 4.12 and later; sock_diag(7)), for the drops after the last datagram
// read, which no control message reported yet.
func (u *udpInput) countKernelDrops() {
	rc, err := u.conn.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		var mem [unix.SK_MEMINFO_VARS + 4]uint32
		n := uint32(unsafe.Sizeof(mem))
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&n)), 0)
		if errno == 0 && n > 4*unix.SK_MEMINFO_DROPS {
			u.noteKernelDrops(mem[unix.SK_MEMINFO_DROPS])
		}
	})
}

// rxqOverflow returns the SO_RXQ_OVFL count in the control messages oob,
// if there is one. It does not allocate.
func rxqOverflow(oob []byte) (uint32, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		var l uint64
		var level, typ int32
		if hdr == 16 { // 64-bit: size_t cmsg_len, int cmsg_level, int cmsg_type
			l = binary.NativeEndian.Uint64(oob)
			level, typ = int32(binary.NativeEndian.Uint32(oob[8:])), int32(binary.NativeEndian.Uint32(oob[12:]))
		} else {
			l = uint64(binary.NativeEndian.Uint32(oob))
			level, typ = int32(binary.NativeEndian.Uint32(oob[4:])), int32(binary.NativeEndian.Uint32(oob[8:]))
		}
		if l < hdr || l > uint64(len(oob)) {
			return 0, false
		}
		if level == unix.SOL_SOCKET && typ == unix.SO_RXQ_OVFL && l >= uint64(unix.CmsgLen(4)) {
			return binary.NativeEndian.Uint32(oob[unix.CmsgLen(0):]), true
		}
		next := unix.CmsgSpace(int(l) - unix.CmsgLen(0))
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

// read is one reader: recvmmsg batches, parse, hand to the rings: the
// events of one recvmmsg go to each ring at once (TryPushBatch), one batch
// per ring, so a sender's datagrams keep their order.
func (u *udpInput) read(ctx context.Context) error {
	n := u.cfg.BatchSize
	ms := make([]ipv4.Message, n)
	size := int(u.cfg.MaxMessageSize)
	backing := make([]byte, n*size)
	oob := make([]byte, n*oobSize)
	for i := range ms {
		ms[i].Buffers = [][]byte{backing[i*size : (i+1)*size : (i+1)*size]}
		ms[i].OOB = oob[i*oobSize : (i+1)*oobSize : (i+1)*oobSize]
	}
	var drops uint32 // the last SO_RXQ_OVFL count this reader saw
	sp := newSyslogParser(u.loc)
	batches := make([]*engine.Producer, u.workers)
	for i := range batches {
		batches[i] = u.stats.in.NewProducer(uint64(i))
		defer batches[i].Release()
	}
	// The last sender's address, as a string and a shard key: senders send
	// in bursts, so most datagrams skip formatting and hashing it.
	var lastAddr netip.AddrPort
	var peer string
	var b *engine.Producer    // the producer of the last sender's worker
	var backoff time.Duration // since the last read that succeeded
	for {
		k, err := u.rd.ReadBatch(ms, 0)
		u.stats.reads.Add(1)
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
			if m.NN > 0 { // only once the socket has dropped a datagram
				if v, ok := rxqOverflow(m.OOB[:m.NN]); ok && v != drops {
					drops = v
					u.noteKernelDrops(v)
				}
			}
			if ua, ok := m.Addr.(*net.UDPAddr); ok {
				if ap := ua.AddrPort(); ap != lastAddr || b == nil {
					lastAddr, peer = ap, ap.Addr().Unmap().String()
					b = batches[maphash.Comparable(shardSeed, ap)%uint64(len(batches))]
				}
			} else if b == nil {
				b = batches[0]
			}
			u.stats.bytes.Add(int64(len(data)))
			ev := b.Event()
			sp.Parse(ev, data, peer)
			if m.Flags&syscall.MSG_TRUNC != 0 {
				ev.Flags |= relaykit.FlagTruncated
				u.stats.truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				u.stats.parseErrors.Add(1)
			}
			if b.Full() {
				b.TryPush()
			}
		}
		for _, b := range batches {
			b.TryPush()
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

// setSockoptInt sets an integer socket option on conn.
func setSockoptInt(conn *net.UDPConn, level, opt, v int) error {
	rc, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) }); err != nil {
		return err
	}
	return serr
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
