package udp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/cfgerr"
)

var (
	// ErrInvalidConfig is wrapped by the errors [New] and
	// [Config.Validate] return for a bad [Config]: each is a
	// *relaykit.FieldError naming the field.
	ErrInvalidConfig = errors.New("udp: invalid config")
	// ErrClosed is returned by [Listener.Serve] on a listener that was
	// closed or has served already.
	ErrClosed = errors.New("udp: listener closed")
)

// Defaults and limits of [Config].
const (
	// DefaultReadBuffer is the receive buffer (SO_RCVBUF) a listener asks
	// for when [Config].ReadBuffer is zero: the kernel's default
	// (net.core.rmem_default, 208 KiB on most Linux systems) drops
	// datagrams under a burst of a few thousand.
	DefaultReadBuffer = 4 << 20
	// MaxMessageSize is the largest [Config].MaxMessageSize, and its
	// default: 64 KiB holds every UDP datagram (at most 65,507 bytes of
	// payload over IPv4, 65,527 over IPv6 without jumbograms).
	MaxMessageSize = 64 << 10
	// MaxBatchSize is the largest [Config].BatchSize: Linux reads at most
	// 1024 (UIO_MAXIOV) datagrams per recvmmsg.
	MaxBatchSize = 1024
	// MaxReaders is the largest [Config].Readers.
	MaxReaders = 64
)

// Config configures a [Listener]. The zero value is usable: every field's
// zero value means the documented default. A listener's memory for
// datagrams is Readers × BatchSize × MaxMessageSize bytes (4 MiB with the
// defaults), allocated when Serve starts.
type Config struct {
	// Name identifies the listener in log records and errors.
	Name string
	// Address is the local address to bind, "host:port". An IPv4 address
	// ("127.0.0.1:514") binds an IPv4 socket, an IPv6 one ("[::1]:514")
	// an IPv6-only socket; a host name is resolved; without a host
	// (":514") the socket takes both IPv4 and IPv6 where the system
	// allows. Port 0 picks a free port ([Listener.Addr] tells which).
	// Required.
	Address string
	// Handler handles the datagrams of each read; see [Handler].
	// Required.
	Handler Handler
	// ReadBuffer is the size of the socket's receive buffer (SO_RCVBUF),
	// in bytes: what the kernel holds for the listener while its readers
	// are busy; datagrams that find it full are dropped and counted as
	// kernel drops (see the package documentation). Linux caps the size
	// at net.core.rmem_max; the listener then sets it with SO_RCVBUFFORCE
	// when the process may (CAP_NET_ADMIN), and otherwise logs the cap
	// once and goes on with it. Zero means [DefaultReadBuffer] (4 MiB);
	// negative leaves the system's default (net.core.rmem_default).
	ReadBuffer int
	// MaxMessageSize is the largest datagram handed over whole, in bytes;
	// the first MaxMessageSize bytes of a longer one are handed over with
	// [Datagram].Truncated set, and the rest is lost (counted in
	// [Stats].Truncated). Zero means [MaxMessageSize] (64 KiB, every
	// datagram); at most [MaxMessageSize].
	MaxMessageSize int
	// BatchSize is the most datagrams one read (one recvmmsg call, one
	// call of the [Handler]) returns. Zero means 64; at most
	// [MaxBatchSize]. Outside Linux a read returns one datagram.
	BatchSize int
	// Readers is the number of goroutines reading the socket, each with
	// its own buffers and each calling the [Handler] on its own. One
	// reader keeps every sender's datagrams in order; more readers read a
	// busy socket on more cores, and the datagrams of one sender may then
	// reach the handler out of order. Zero means 1; at most [MaxReaders].
	Readers int
	// DrainTime bounds how long the readers go on reading what the socket
	// holds once Serve's context ends, measured from when every reader has
	// stopped waiting for new datagrams. On Linux the drain ends earlier,
	// as soon as the socket is empty; elsewhere it lasts DrainTime. Zero
	// means 200 ms; negative means no drain: what the socket holds is
	// lost, uncounted.
	DrainTime time.Duration
	// DropPollInterval is how often Serve reads the socket's kernel drop
	// count with SO_MEMINFO, so that drops show even when no datagram
	// follows them (a burst, then silence); drops that a datagram follows
	// are counted when it is read, and Serve reads the count once more
	// before it returns. Zero means 1 second; negative means never.
	// Without effect outside Linux.
	DropPollInterval time.Duration
	// Logger receives one record when an episode of read errors starts and
	// one when reads succeed again (not one per error), and one when the
	// kernel caps ReadBuffer. Nil means no logging.
	Logger *slog.Logger
	// Hooks are called as the listener counts; see [Hooks].
	Hooks Hooks
}

// Hooks are functions the listener calls, each optional. They run on the
// listener's goroutines, possibly several at once: they must be fast and
// safe for concurrent use.
type Hooks struct {
	// OnKernelDrops is called with the number of datagrams (n > 0) the
	// kernel dropped since it last reported any, because the socket's
	// receive buffer was full (or for another reason the kernel counts as
	// a socket drop). Those datagrams were sent to the listener and never
	// reach the handler: a relay counts them as received and dropped.
	// The sum of n is [Stats].KernelDrops.
	OnKernelDrops func(n int)
}

// Stats is a snapshot of a listener's counters.
type Stats struct {
	Datagrams int64 // datagrams handed to the handler
	Bytes     int64 // their bytes, as handed over (a truncated datagram counts MaxMessageSize), in bytes
	Reads     int64 // reads (recvmmsg calls) that returned datagrams: calls of the handler
	// ReadErrors counts failed reads (an ICMP error the socket reports,
	// ENOMEM, ...): the reader waits (5 ms, doubling up to 1 s) and reads
	// again.
	ReadErrors int64
	// ReadFailing reports that an episode of read errors is under way: the
	// last read failed.
	ReadFailing bool
	// KernelDrops counts datagrams the kernel dropped at the socket
	// (receive buffer full) as far as the listener has learnt of them:
	// from the next datagram read, from the SO_MEMINFO poll, or at the end
	// of Serve. Always zero outside Linux.
	KernelDrops int64
	// Truncated counts datagrams longer than MaxMessageSize, handed over
	// cut.
	Truncated int64
}

// Datagram is one datagram received.
type Datagram struct {
	// Data is the payload, at most [Config].MaxMessageSize bytes. It points
	// into the reader's buffers, which the next read reuses: it is valid
	// only until the handler returns. Copy what you keep.
	Data []byte
	// Addr is the sender's address and port; an IPv4 sender on a
	// dual-stack socket has its IPv4 address (not IPv4-mapped IPv6).
	Addr netip.AddrPort
	// Truncated reports that the datagram was longer than
	// [Config].MaxMessageSize and Data holds its first MaxMessageSize bytes
	// (MSG_TRUNC).
	Truncated bool
}

// Handler handles the datagrams of one read (one recvmmsg call on Linux):
// batch holds at least one datagram and at most [Config].BatchSize, in the
// order the socket received them. reader identifies the goroutine calling
// it, 0 <= reader < [Config].Readers (1 when zero): calls with the same
// reader come from one goroutine for the whole of Serve, one at a time, so
// per-reader state (a parser, an engine producer) indexed by reader needs
// no lock. Calls with different readers run concurrently.
//
// The handler owns batch and the datagrams' Data until it returns, and
// must not retain them. While it runs, its reader does not read: the socket
// buffers what arrives (up to [Config].ReadBuffer) and drops the rest,
// counted as kernel drops. A handler that must never lose datagrams hands
// them on without waiting.
type Handler func(reader int, batch []Datagram)

// Listener reads datagrams from a UDP socket in batches and hands them to
// a [Handler]. Its methods are safe for concurrent use.
type Listener struct {
	sock socket
	cfg  Config
	log  *slog.Logger

	served   atomic.Bool
	mu       sync.Mutex // orders the read deadlines stop and the drain set
	stopOnce sync.Once
	stopping atomic.Bool   // stop was called: ctx ended or Close
	stopc    chan struct{} // closed by stop: ends a backoff
	closed   sync.Once
	arrived  atomic.Int32  // readers done with reading new datagrams
	drainc   chan struct{} // closed when every reader has arrived

	failing atomic.Bool  // an episode of read errors is under way
	episode atomic.Int64 // read errors in the current episode

	// dropsSeen is the socket's drop count (a 32-bit kernel counter,
	// widened) as far as the listener has accounted for it.
	dropsSeen atomic.Uint64

	datagrams, bytes, reads, readErrors, truncated atomic.Int64
}

// Read error backoff, as net/http's Server.Serve does after an accept
// error.
const (
	backoffMin = 5 * time.Millisecond
	backoffMax = time.Second
)

// aLongTimeAgo is a read deadline in the past: it wakes every reader.
var aLongTimeAgo = time.Unix(1, 0)

// New binds a UDP socket to cfg.Address and returns a listener for it;
// the socket buffers datagrams from now on, and [Listener.Serve] reads
// them.
//
// New sets the receive buffer ([Config].ReadBuffer) and, on Linux,
// SO_RXQ_OVFL, which makes the kernel report its drop count with the
// datagrams. A bad Config is a *relaykit.FieldError wrapping
// [ErrInvalidConfig]; an error of the socket names the option that
// failed.
func New(cfg Config) (*Listener, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	network, addr := "udp", cfg.Address
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		if ap.Addr().Unmap().Is4() {
			network = "udp4"
			addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
		} else {
			network = "udp6"
		}
	}
	ua, err := net.ResolveUDPAddr(network, addr)
	if err != nil {
		return nil, fmt.Errorf("udp: %s: %w", cfg.Name, err)
	}
	conn, err := net.ListenUDP(network, ua)
	if err != nil {
		return nil, fmt.Errorf("udp: %s: %w", cfg.Name, err)
	}
	log := cfg.Logger.With("input", cfg.Name)
	s, err := newSocket(conn, &cfg, log)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("udp: %s: %s: %w", cfg.Name, conn.LocalAddr(), err)
	}
	return newListener(s, cfg, log), nil
}

// Validate reports whether [New] would accept cfg, without binding
// anything: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg Config) Validate() error { return cfg.fill() }

func newListener(s socket, cfg Config, log *slog.Logger) *Listener {
	return &Listener{sock: s, cfg: cfg, log: log, stopc: make(chan struct{}), drainc: make(chan struct{})}
}

func (cfg *Config) fill() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	if cfg.Address == "" {
		return bad("Address", "required")
	}
	if cfg.Handler == nil {
		return bad("Handler", "required")
	}
	if cfg.ReadBuffer == 0 {
		cfg.ReadBuffer = DefaultReadBuffer
	}
	if cfg.MaxMessageSize == 0 {
		cfg.MaxMessageSize = MaxMessageSize
	}
	if cfg.MaxMessageSize < 0 || cfg.MaxMessageSize > MaxMessageSize {
		return bad("MaxMessageSize", "%d out of range 1..%d", cfg.MaxMessageSize, MaxMessageSize)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 64
	}
	if cfg.BatchSize < 0 || cfg.BatchSize > MaxBatchSize {
		return bad("BatchSize", "%d out of range 1..%d", cfg.BatchSize, MaxBatchSize)
	}
	if cfg.Readers == 0 {
		cfg.Readers = 1
	}
	if cfg.Readers < 0 || cfg.Readers > MaxReaders {
		return bad("Readers", "%d out of range 1..%d", cfg.Readers, MaxReaders)
	}
	if cfg.DrainTime == 0 {
		cfg.DrainTime = 200 * time.Millisecond
	}
	if cfg.DropPollInterval == 0 {
		cfg.DropPollInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Addr is the bound address (a *net.UDPAddr), with the port the system
// chose for port 0.
func (l *Listener) Addr() net.Addr { return l.sock.LocalAddr() }

// Stats returns a snapshot of the counters.
func (l *Listener) Stats() Stats {
	return Stats{
		Datagrams: l.datagrams.Load(), Bytes: l.bytes.Load(), Reads: l.reads.Load(),
		ReadErrors: l.readErrors.Load(), ReadFailing: l.failing.Load(),
		KernelDrops: int64(l.dropsSeen.Load()), Truncated: l.truncated.Load(),
	}
}

// Close closes the socket: what it holds is lost, and a running Serve stops
// at once (without draining) and returns nil once its handlers have
// returned. It is the way to release a listener that never served. Close
// is idempotent and returns nil.
func (l *Listener) Close() error {
	l.stop()
	l.closed.Do(func() { _ = l.sock.Close() })
	return nil
}

// stop makes every reader stop waiting for datagrams: the ones blocked in a
// read wake up (a deadline in the past), the others see stopping after
// their handler returns, and a backoff ends.
func (l *Listener) stop() {
	l.stopOnce.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.stopping.Store(true)
		close(l.stopc)
		_ = l.sock.SetReadDeadline(aLongTimeAgo)
	})
}

// Serve reads datagrams until ctx ends, with [Config].Readers goroutines,
// each calling [Config].Handler once per read with the datagrams of that
// read. When ctx
// ends, the readers stop waiting for new datagrams and read what the socket
// holds, for at most [Config].DrainTime; then Serve reads the kernel's drop
// count a last time, closes the socket and returns nil. [Listener.Close]
// ends Serve at once, without the drain; Serve returns nil then too.
//
// Serve owns every goroutine it starts (the readers and the SO_MEMINFO
// poll) and they have returned when it returns. A read error never ends
// Serve: the reader counts it ([Stats].ReadErrors), waits 5 ms, doubling
// after each further error up to 1 s, and reads again; [Config].Logger
// hears of an episode once when it starts and once when a read succeeds
// again.
//
// Serve may be called once: on a listener that has served or is closed it
// returns [ErrClosed].
func (l *Listener) Serve(ctx context.Context) error {
	h := l.cfg.Handler
	if l.served.Swap(true) || l.stopping.Load() {
		return ErrClosed
	}
	stop := context.AfterFunc(ctx, l.stop)
	defer stop()

	var polling sync.WaitGroup
	pollDone := make(chan struct{})
	if every := l.cfg.DropPollInterval; every > 0 && l.sock.countsDrops() {
		polling.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-pollDone:
					return
				case <-t.C:
					l.pollKernelDrops()
				}
			}
		})
	}
	var readers sync.WaitGroup
	for i := range l.cfg.Readers {
		r := &reader{l: l, idx: i, h: h, src: l.sock.newReader(l.cfg.BatchSize, l.cfg.MaxMessageSize),
			dgs: make([]Datagram, l.cfg.BatchSize)}
		readers.Go(r.run)
	}
	readers.Wait()
	l.stop() // returns once a stop that ctx started has returned
	close(pollDone)
	polling.Wait()
	l.pollKernelDrops()
	l.closed.Do(func() { _ = l.sock.Close() })
	return nil
}

// pollKernelDrops reads the socket's drop count (SO_MEMINFO), for the drops
// after the last datagram read, which no control message reported yet.
func (l *Listener) pollKernelDrops() {
	if v, ok := l.sock.kernelDrops(); ok {
		l.noteKernelDrops(v)
	}
}

// noteKernelDrops accounts for the socket's drop count v (from SO_RXQ_OVFL
// or SO_MEMINFO, a 32-bit counter that wraps): whatever it grew by since
// the count the listener has seen is new drops. Readers and the poll may
// report counts out of order; an older one changes nothing.
func (l *Listener) noteKernelDrops(v uint32) {
	for {
		seen := l.dropsSeen.Load()
		d := int32(v - uint32(seen))
		if d <= 0 {
			return
		}
		if l.dropsSeen.CompareAndSwap(seen, seen+uint64(d)) {
			if f := l.cfg.Hooks.OnKernelDrops; f != nil {
				f(int(d))
			}
			return
		}
	}
}

// readFailed counts a read error and logs the first of an episode.
func (l *Listener) readFailed(err error, backoff time.Duration) {
	l.readErrors.Add(1)
	l.episode.Add(1)
	if l.failing.CompareAndSwap(false, true) {
		l.log.Warn("UDP read failed; reading again after a backoff (further errors are counted, not logged)",
			"error", err, "backoff", backoff)
	}
}

// readRecovered ends an episode of read errors.
func (l *Listener) readRecovered() {
	if l.failing.CompareAndSwap(true, false) {
		l.log.Info("UDP reads succeed again", "read_errors", l.episode.Swap(0))
	}
}

// awaitDrain is where a reader that has stopped waiting for new datagrams
// waits for the others; the last one to arrive sets the drain's deadline,
// after stop's (l.mu orders them), so the drain reads are not cut by it.
func (l *Listener) awaitDrain() {
	if l.arrived.Add(1) == int32(l.cfg.Readers) {
		if l.cfg.DrainTime > 0 {
			l.mu.Lock()
			_ = l.sock.SetReadDeadline(time.Now().Add(l.cfg.DrainTime))
			l.mu.Unlock()
		}
		close(l.drainc)
	}
	<-l.drainc
}

// reader is one of Serve's reading goroutines.
type reader struct {
	l     *Listener
	idx   int
	h     Handler
	src   batchReader
	dgs   []Datagram
	drops uint32 // the last SO_RXQ_OVFL count this reader saw
}

func (r *reader) run() {
	l := r.l
	var backoff time.Duration // since the last read that succeeded
	for !l.stopping.Load() {
		err := r.once(false)
		if err == nil {
			backoff = 0
			if l.failing.Load() { // one load per read
				l.readRecovered()
			}
			continue
		}
		if l.stopping.Load() || errors.Is(err, net.ErrClosed) {
			break
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue // only stop sets a deadline before the drain, after setting stopping
		}
		backoff = min(max(2*backoff, backoffMin), backoffMax)
		l.readFailed(err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-l.stopc:
			t.Stop()
		}
	}
	l.awaitDrain()
	if l.cfg.DrainTime <= 0 {
		return
	}
	for {
		err := r.once(true)
		switch {
		case err == nil:
		case errors.Is(err, errEmpty), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, net.ErrClosed):
			return
		default: // an error the socket reported: the data behind it is still there
			l.readErrors.Add(1)
		}
	}
}

// once reads one batch and hands it to the handler. With nonblocking, an
// empty socket returns errEmpty (Linux) instead of waiting.
func (r *reader) once(nonblocking bool) error {
	n, drops, hasDrops, err := r.src.read(r.dgs, nonblocking)
	if err != nil {
		return err
	}
	l := r.l
	if hasDrops && drops != r.drops {
		r.drops = drops
		l.noteKernelDrops(drops)
	}
	batch := r.dgs[:n]
	var bytes, truncated int64
	for i := range batch {
		bytes += int64(len(batch[i].Data))
		if batch[i].Truncated {
			truncated++
		}
	}
	l.reads.Add(1)
	l.datagrams.Add(int64(n))
	l.bytes.Add(bytes)
	if truncated != 0 {
		l.truncated.Add(truncated)
	}
	r.h(r.idx, batch)
	return nil
}

// socket is what the listener needs of its UDP socket: sock_linux.go and
// sock_other.go implement it on a *net.UDPConn; tests fake it.
type socket interface {
	LocalAddr() net.Addr
	SetReadDeadline(t time.Time) error
	Close() error
	// newReader returns a reader with room for batch datagrams of up to
	// size bytes, for one goroutine.
	newReader(batch, size int) batchReader
	// countsDrops reports whether the socket reports kernel drops.
	countsDrops() bool
	// kernelDrops returns the socket's drop count (SO_MEMINFO).
	kernelDrops() (uint32, bool)
}

// batchReader reads datagrams for one goroutine.
type batchReader interface {
	// read fills dgs[:n] with the datagrams of one read (n >= 1), their
	// Data in the reader's buffers, and returns the last kernel drop count
	// they carried (SO_RXQ_OVFL), if any did. With nonblocking, an empty
	// socket returns errEmpty where the platform can tell; otherwise read
	// waits for a datagram or the read deadline.
	read(dgs []Datagram, nonblocking bool) (n int, drops uint32, hasDrops bool, err error)
}

// errEmpty is a nonblocking read's answer on an empty socket.
var errEmpty = errors.New("udp: socket empty")
