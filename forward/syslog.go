package forward

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/episode"
)

// ErrSyslogClosed is returned (wrapped in a [*SendError]) by [Syslog.Send]
// after [Syslog.Close].
var ErrSyslogClosed = errors.New("forward: syslog sink closed")

// SyslogConfig configures a [Syslog] sink. The zero value of every field
// except Address is a documented default.
type SyslogConfig struct {
	// Name names the destination in errors and logs. Zero means "syslog".
	Name string
	// Network is the transport: "tcp" (RFC 6587), "tls" (RFC 5425) or
	// "udp" (RFC 5426); "tcp4", "tcp6", "udp4" and "udp6" pin the address
	// family. Zero means "tcp".
	Network string
	// Address is the receiver's host:port. Required.
	Address string

	// Format is the message format. Zero means [SyslogRFC5424].
	Format SyslogFormat
	// Framing delimits messages on tcp and tls. Zero means
	// [SyslogOctetCounting]. It is ignored for udp.
	Framing SyslogFraming

	// DefaultPriority is the PRI (facility*8 + severity, 0-191) of events
	// without [relaykit.FlagPriority]. Zero means 13 (user.notice); PRI 0
	// (kern.emerg) cannot be the default.
	DefaultPriority uint8
	// Hostname is the HOSTNAME of events with an empty Host. Zero means the
	// local host name (os.Hostname at construction), or "-" if unknown.
	Hostname string
	// AppName is the APP-NAME (RFC 3164 TAG) of events with an empty
	// Source. Zero means the NILVALUE "-".
	AppName string
	// ProcIDField names the event field whose value becomes PROCID. Zero,
	// or a missing field, means "-".
	ProcIDField string
	// MsgIDField names the event field whose value becomes MSGID (RFC 5424
	// only). Zero, or a missing field, means "-".
	MsgIDField string
	// StructuredData lists the event fields sent as SD-PARAMs of one
	// SD-ELEMENT (RFC 5424 only), in this order; fields missing from an
	// event are left out. Each must be a valid SD-NAME (1-32 printable
	// ASCII characters except '=', ' ', ']' and '"'). Zero means no
	// structured data ("-").
	StructuredData []string
	// SDID is the SD-ID of that element: an IANA-registered name or
	// name@<private enterprise number>. Zero means "relaykit@32473" (32473
	// is the enterprise number reserved for documentation, RFC 5612).
	SDID string

	// MaxMessageSize is the largest message, in bytes without framing; a
	// longer one is cut to this size (the MSG part is cut first) and
	// counted in [SyslogStats.Truncated]. Zero means 2048 for udp (RFC 5426
	// recommends receivers accept 2048) and 65536 for tcp and tls. Values
	// below 480 are rejected (the minimum RFC 5426 requires).
	MaxMessageSize int

	// TLS configures network tls, like the HTTP sinks' [HTTPConfig].TLS:
	// RootCAs for a private CA, Certificates for a client certificate;
	// [TLSConfig.Build] makes one from files or PEM. The config is cloned,
	// its ServerName filled from Address when empty. Nil verifies the
	// receiver's certificate against the system roots for the host in
	// Address. It must be nil for tcp and udp.
	TLS *tls.Config
	// SendBuffer is SO_SNDBUF of the socket, in bytes. Zero means the
	// operating system's default. Raise it for high-rate udp.
	SendBuffer int
	// DialTimeout bounds each connection attempt, TLS handshake included.
	// Zero means 10 s.
	DialTimeout time.Duration
	// WriteTimeout bounds each write of a batch. Zero means 30 s.
	WriteTimeout time.Duration

	// Logger receives connection state changes (connected, lost, failed),
	// never per-event messages. Nil means no logging.
	Logger *slog.Logger
}

// SyslogStats is a snapshot of a [Syslog] sink's counters, all cumulative
// since construction.
type SyslogStats struct {
	Events      int64 // events written to a healthy connection
	Bytes       int64 // bytes written, framing included
	Batches     int64 // batches written completely
	Truncated   int64 // messages cut at MaxMessageSize
	Failed      int64 // events reported undelivered by Send's error
	Dials       int64 // connections established
	DialErrors  int64 // failed connection attempts
	WriteErrors int64 // failed writes (the connection was discarded)
	Connected   bool  // whether a connection is currently open
}

// Syslog is a [relaykit.Sink] that sends events as syslog messages (RFC 5424
// or RFC 3164) over TCP with octet counting (RFC 6587), TLS (RFC 5425) or UDP
// (RFC 5426).
//
// # Batches and connections
//
// Send formats the whole batch into one reused buffer and writes it with one
// write call on tcp and tls, or with batched datagram sends (sendmmsg on
// Linux) on udp, one message per datagram. The sink keeps one connection
// and opens it lazily; Send calls are serialised, so messages leave in the
// order of the batches and of the events within each batch.
//
// # Delivery
//
// Send makes one attempt and does not retry: each event is either written
// to a connection that accepted the write, or reported undelivered in a
// [*relaykit.BatchError] (retryable, [relaykit.ReasonSinkError]): none is
// half-sent and forgotten. Put the sink behind a delivery.Queue to retry.
// One attempt dials at most once: when there is no connection, or when a
// write fails on the connection an earlier Send left open (the receiver
// restarted, an idle timeout), the connection is discarded and the batch
// (on udp: the datagrams not yet sent) is written once on a new one; a
// failed dial, or a failed write on a connection this Send opened, ends
// the attempt. Before writing to an idle connection the sink checks,
// without blocking, whether the receiver closed it, so a receiver restart
// is usually noticed before data is written into a dead connection.
//
// Delivery on tcp and tls is at least once: syslog has no
// acknowledgements, so after a failed write the part of the batch the
// receiver did read is sent again (duplicates); and bytes the kernel
// accepted just before the receiver vanished (a crash rather than a
// close, or a close between the check and the write) can still be lost,
// at most one socket send buffer. UDP is fire-and-forget: a datagram the
// network drops is not noticed.
//
// A Syslog is safe for concurrent use by multiple goroutines.
type Syslog struct {
	dest      string
	network   string // "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6"
	address   string
	useTLS    bool
	udp       bool
	tlsConfig *tls.Config
	enc       syslogEncoder
	maxMsg    int
	sendBuf   int
	dialTO    time.Duration
	writeTO   time.Duration
	log       *slog.Logger
	dialing   episode.Log // connects failing: logged when it starts and ends

	mu     sync.Mutex // serialises sends; guards the fields below
	closed bool
	conn   net.Conn
	pconn  batchWriter    // udp: datagram batch writer on conn
	buf    []byte         // formatted batch (reused)
	ends   []int          // end offset of each message in buf (reused)
	msgs   []ipv4.Message // udp: reused message headers

	events, bytes, batches, truncated, failed atomic.Int64
	dials, dialErrors, writeErrors            atomic.Int64
	connected                                 atomic.Bool
}

// batchWriter is the WriteBatch method shared by ipv4 and ipv6 PacketConns.
type batchWriter interface {
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// maxPooledBuf is the largest batch buffer the sink keeps between sends;
// a larger one (from an unusually big batch) is released.
const maxPooledBuf = 4 << 20

// udpChunk is how many datagrams one WriteBatch call sends at most
// (below Linux's UIO_MAXIOV of 1024).
const udpChunk = 256

// NewSyslog returns a Syslog sink for cfg. It does not connect: the first
// Send does. A bad Config is a *relaykit.FieldError wrapping
// [ErrInvalidConfig].
func NewSyslog(cfg SyslogConfig) (*Syslog, error) {
	s := &Syslog{
		dest:    cfg.Name,
		network: cfg.Network,
		address: cfg.Address,
		maxMsg:  cfg.MaxMessageSize,
		sendBuf: cfg.SendBuffer,
		dialTO:  cfg.DialTimeout,
		writeTO: cfg.WriteTimeout,
		log:     cfg.Logger,
	}
	invalid := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	if s.dest == "" {
		s.dest = "syslog"
	}
	switch s.network {
	case "":
		s.network = "tcp"
	case "tcp", "tcp4", "tcp6":
	case "tls":
		s.network, s.useTLS = "tcp", true
	case "udp", "udp4", "udp6":
		s.udp = true
	default:
		return nil, invalid("Network", "unknown network %q (want tcp, tls or udp)", cfg.Network)
	}
	host, _, err := net.SplitHostPort(cfg.Address)
	if err != nil {
		return nil, invalid("Address", "%q: %v", cfg.Address, err)
	}
	if cfg.TLS != nil && !s.useTLS {
		return nil, invalid("TLS", "set, but network %q is not tls", cfg.Network)
	}
	if s.useTLS {
		if cfg.TLS != nil {
			s.tlsConfig = cfg.TLS.Clone()
		} else {
			s.tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if s.tlsConfig.ServerName == "" {
			s.tlsConfig.ServerName = host
		}
	}
	switch cfg.Format {
	case SyslogRFC5424, SyslogRFC3164:
	default:
		return nil, invalid("Format", "unknown format %d", int(cfg.Format))
	}
	switch cfg.Framing {
	case SyslogOctetCounting, SyslogNonTransparent:
	default:
		return nil, invalid("Framing", "unknown framing %d", int(cfg.Framing))
	}
	if cfg.DefaultPriority > 191 {
		return nil, invalid("DefaultPriority", "%d out of range 0-191", cfg.DefaultPriority)
	}
	if s.maxMsg == 0 {
		s.maxMsg = 65536
		if s.udp {
			s.maxMsg = 2048
		}
	}
	if s.maxMsg < 480 {
		return nil, invalid("MaxMessageSize", "%d below 480", s.maxMsg)
	}
	if s.udp && s.maxMsg > 65507 {
		return nil, invalid("MaxMessageSize", "%d above the UDP maximum 65507", s.maxMsg)
	}
	if s.sendBuf < 0 {
		return nil, invalid("SendBuffer", "must not be negative")
	}
	if s.dialTO < 0 {
		return nil, invalid("DialTimeout", "must not be negative")
	}
	if s.writeTO < 0 {
		return nil, invalid("WriteTimeout", "must not be negative")
	}
	if s.dialTO == 0 {
		s.dialTO = 10 * time.Second
	}
	if s.writeTO == 0 {
		s.writeTO = 30 * time.Second
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}

	hostname := cfg.Hostname
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	sdID := cfg.SDID
	if sdID == "" {
		sdID = "relaykit@32473"
	}
	if len(cfg.StructuredData) > 0 && !validSDID(sdID) {
		return nil, invalid("SDID", "invalid SD-ID %q", sdID)
	}
	seen := make(map[string]bool, len(cfg.StructuredData))
	for _, name := range cfg.StructuredData {
		if !validSDName(name) {
			return nil, invalid("StructuredData", "field %q is not a valid SD-NAME", name)
		}
		if seen[name] {
			return nil, invalid("StructuredData", "field %q listed twice", name)
		}
		seen[name] = true
	}
	s.enc = syslogEncoder{
		format:      cfg.Format,
		defaultPRI:  cfg.DefaultPriority,
		hostname:    []byte(hostname),
		appName:     []byte(cfg.AppName),
		procIDField: cfg.ProcIDField,
		msgIDField:  cfg.MsgIDField,
		sdID:        sdID,
		sdFields:    append([]string(nil), cfg.StructuredData...),
		lfFraming:   !s.udp && cfg.Framing == SyslogNonTransparent,
	}
	if s.enc.defaultPRI == 0 {
		s.enc.defaultPRI = 13
	}
	return s, nil
}

// Send writes batch to the receiver, in order, in one attempt as described
// on [Syslog]. It returns nil when every event was written, else a
// [*relaykit.BatchError] listing the events not written (the whole batch,
// or on udp the datagrams after those that went out), retryable, with a
// [*SendError] as the cause. When ctx ends first (or the sink is closed)
// the BatchError's reason is [relaykit.ReasonShutdown] and the error wraps
// ctx.Err() (or [ErrSyslogClosed]). Send does not retain batch.
func (s *Syslog) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.fail(ctx, len(batch), 0, ErrSyslogClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.fail(ctx, len(batch), 0, err)
	}
	s.buf, s.ends = s.appendBatch(s.buf[:0], s.ends[:0], batch)
	err := s.write(ctx, s.buf, s.ends)
	s.shrink()
	return err
}

// write writes the formatted messages of buf (ending at ends) in one
// attempt, as Send does, and returns Send's error (positions in ends).
// s.mu is held.
func (s *Syslog) write(ctx context.Context, buf []byte, ends []int) error {
	first := 0 // first message not yet written (udp)
	for redialed := false; ; redialed = true {
		dialed, err := s.connect(ctx)
		if err != nil {
			return s.fail(ctx, len(ends), first, err)
		}
		// A write is bounded by WriteTimeout and cut short when ctx ends.
		conn := s.conn
		// The deadline is set before the context can cut it short: a
		// cancellation that came first must not be overwritten.
		_ = conn.SetWriteDeadline(time.Now().Add(s.writeTO))
		stop := context.AfterFunc(ctx, func() { _ = conn.SetWriteDeadline(time.Unix(1, 0)) })
		if s.udp {
			var n int
			n, err = s.writeDatagrams(buf, ends, first)
			first += n
		} else {
			err = s.writeStream(buf, len(ends))
		}
		stop()
		if err == nil {
			s.batches.Add(1)
			return nil
		}
		s.writeErrors.Add(1)
		s.drop(err)
		if dialed || redialed || ctx.Err() != nil {
			return s.fail(ctx, len(ends), first, err)
		}
		// The connection an earlier Send left open failed: it was stale,
		// not the attempt. Write once more on a new one.
	}
}

// AppendMessage appends e as one syslog message in the sink's format,
// without framing and without truncation, to dst and returns the extended
// slice. It does not allocate beyond growing dst. Events without a time get
// the NILVALUE timestamp (RFC 5424) or the current time (RFC 3164).
func (s *Syslog) AppendMessage(dst []byte, e *relaykit.Event) []byte {
	var now int64
	if s.enc.format == SyslogRFC3164 && e.Time == 0 && e.ReceiveTime == 0 {
		now = time.Now().UnixNano()
	}
	return s.enc.appendMessage(dst, e, now)
}

// appendBatch formats batch, framed, onto buf, recording where each
// message ends in ends, and returns both.
func (s *Syslog) appendBatch(buf []byte, ends []int, batch []relaykit.Event) ([]byte, []int) {
	var now int64
	if s.enc.format == SyslogRFC3164 {
		now = time.Now().UnixNano() // once per batch, for events without a time
	}
	octets := !s.udp && !s.enc.lfFraming
	for i := range batch {
		start := len(buf)
		if octets {
			// Reserve room for the longest length prefix ("65536 " at
			// most for maxMsg up to 99999, more for larger) and move the
			// message down once its length is known.
			buf = append(buf, "          "[:prefixWidth(s.maxMsg)]...)
		}
		msgStart := len(buf)
		buf = s.enc.appendMessage(buf, &batch[i], now)
		if len(buf)-msgStart > s.maxMsg {
			buf = buf[:msgStart+s.maxMsg]
			s.truncated.Add(1)
		}
		if octets {
			n := len(buf) - msgStart
			var p [12]byte
			prefix := append(strconv.AppendUint(p[:0], uint64(n), 10), ' ')
			shift := msgStart - start - len(prefix)
			copy(buf[start:], prefix)
			copy(buf[start+len(prefix):], buf[msgStart:])
			buf = buf[:len(buf)-shift]
		} else if !s.udp {
			buf = append(buf, '\n')
		}
		ends = append(ends, len(buf))
	}
	return buf, ends
}

// prefixWidth is the width of the longest octet-count prefix for messages
// of at most max bytes: the digits plus the space.
func prefixWidth(max int) int {
	w := 1
	for max >= 10 {
		max /= 10
		w++
	}
	return w + 1
}

// shrink releases an oversized batch buffer.
func (s *Syslog) shrink() {
	if cap(s.buf) > maxPooledBuf {
		s.buf = nil
	}
}

// connect opens a connection if there is none or the open one was closed
// by the receiver, and reports whether it dialed.
func (s *Syslog) connect(ctx context.Context) (bool, error) {
	if s.conn != nil {
		if s.udp || !peerClosed(s.conn) {
			return false, nil
		}
		s.drop(errors.New("connection closed by receiver"))
	}
	dctx, cancel := context.WithTimeout(ctx, s.dialTO)
	defer cancel()
	var conn net.Conn
	var err error
	if s.useTLS {
		d := tls.Dialer{NetDialer: &net.Dialer{}, Config: s.tlsConfig}
		conn, err = d.DialContext(dctx, s.network, s.address)
	} else {
		var d net.Dialer
		conn, err = d.DialContext(dctx, s.network, s.address)
	}
	if err != nil {
		s.dialErrors.Add(1)
		s.dialing.Fail(s.log, "syslog: connect failing", "destination", s.dest, "address", s.address, "error", err)
		return true, &SendError{Destination: s.dest, Code: -1, Retryable: true, Err: err}
	}
	if s.sendBuf > 0 {
		if err := setWriteBuffer(conn, s.sendBuf); err != nil {
			s.log.Warn("syslog: setting SO_SNDBUF failed", "destination", s.dest, "error", err)
		}
	}
	if s.udp {
		uc := conn.(*net.UDPConn)
		if ra, ok := uc.RemoteAddr().(*net.UDPAddr); ok && ra.IP.To4() == nil {
			s.pconn = ipv6.NewPacketConn(uc)
		} else {
			s.pconn = ipv4.NewPacketConn(uc)
		}
	}
	s.conn = conn
	s.dials.Add(1)
	s.connected.Store(true)
	if !s.dialing.OK(s.log, "syslog: connected after failures", "destination", s.dest, "address", s.address, "network", s.network, "tls", s.useTLS) {
		s.log.Info("syslog: connected", "destination", s.dest, "address", s.address, "network", s.network, "tls", s.useTLS)
	}
	return true, nil
}

func setWriteBuffer(conn net.Conn, n int) error {
	type writeBufferer interface{ SetWriteBuffer(int) error }
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if wb, ok := conn.(writeBufferer); ok {
		return wb.SetWriteBuffer(n)
	}
	return nil
}

// drop closes and forgets the current connection after err.
func (s *Syslog) drop(err error) {
	if s.conn == nil {
		return
	}
	_ = s.conn.Close()
	s.conn, s.pconn = nil, nil
	s.connected.Store(false)
	s.log.Warn("syslog: connection lost", "destination", s.dest, "address", s.address, "error", err)
}

// writeStream writes the n formatted messages of buf with one write call.
func (s *Syslog) writeStream(buf []byte, n int) error {
	w, err := s.conn.Write(buf)
	if err != nil {
		return &SendError{Destination: s.dest, Code: -1, Retryable: true, Err: err}
	}
	s.events.Add(int64(n))
	s.bytes.Add(int64(w))
	return nil
}

// writeDatagrams sends the messages of buf (ending at ends) from index
// first on, one per datagram, and returns how many it sent.
func (s *Syslog) writeDatagrams(buf []byte, ends []int, first int) (int, error) {
	sent := 0
	for i := first; i < len(ends); {
		n := min(len(ends)-i, udpChunk)
		if cap(s.msgs) < n {
			s.msgs = make([]ipv4.Message, udpChunk)
			for j := range s.msgs {
				s.msgs[j].Buffers = make([][]byte, 1)
			}
		}
		msgs := s.msgs[:n]
		for j := range msgs {
			start := 0
			if i+j > 0 {
				start = ends[i+j-1]
			}
			msgs[j].Buffers[0] = buf[start:ends[i+j]]
		}
		w, err := s.pconn.WriteBatch(msgs, 0)
		for j := range msgs {
			msgs[j].Buffers[0] = nil
		}
		if w > 0 {
			s.events.Add(int64(w))
			end := ends[i+w-1]
			start := 0
			if i > 0 {
				start = ends[i-1]
			}
			s.bytes.Add(int64(end - start))
		}
		sent += w
		i += w
		if err != nil {
			return sent, &SendError{Destination: s.dest, Code: -1, Retryable: true, Err: err}
		}
	}
	return sent, nil
}

// fail counts the undelivered events [first, n) of a batch of n and
// returns Send's error: a *relaykit.BatchError listing them as retryable,
// with reason ReasonShutdown (and wrapping the cause) when ctx ended or the
// sink was closed, ReasonSinkError otherwise.
func (s *Syslog) fail(ctx context.Context, n, first int, err error) error {
	s.failed.Add(int64(n - first))
	reason := relaykit.ReasonSinkError
	shutdown := ctx.Err()
	if shutdown == nil && errors.Is(err, ErrSyslogClosed) {
		shutdown = ErrSyslogClosed
	}
	if shutdown != nil {
		reason = relaykit.ReasonShutdown
	}
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Destination: s.dest, Code: -1, Retryable: shutdown == nil, Err: err}
	}
	be := &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: first, To: n, Reason: reason, Err: se}}}
	if shutdown != nil && !errors.Is(se, shutdown) {
		return fmt.Errorf("forward: send to %s: %w (%w)", s.dest, shutdown, be)
	}
	return be
}

// Stats returns a snapshot of the sink's counters.
func (s *Syslog) Stats() SyslogStats {
	return SyslogStats{
		Events:      s.events.Load(),
		Bytes:       s.bytes.Load(),
		Batches:     s.batches.Load(),
		Truncated:   s.truncated.Load(),
		Failed:      s.failed.Load(),
		Dials:       s.dials.Load(),
		DialErrors:  s.dialErrors.Load(),
		WriteErrors: s.writeErrors.Load(),
		Connected:   s.connected.Load(),
	}
}

// Close closes the connection, waiting for a Send in progress to finish.
// Later Sends fail with [ErrSyslogClosed]. Close is idempotent and returns
// nil after the first call.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.conn != nil {
		if s.useTLS {
			// Take in what the receiver sent (TLS 1.3 session tickets, given
			// to a client with a ClientSessionCache) through the TLS layer:
			// a socket closed with unread bytes is reset, not closed, and
			// the reset discards what the kernel still held to send.
			_ = peerClosed(s.conn)
		}
		err = s.conn.Close()
		s.conn, s.pconn = nil, nil
		s.connected.Store(false)
	}
	return err
}

var _ relaykit.RequestSink = (*Syslog)(nil)

// Validate reports whether [NewSyslog] would accept cfg, without
// connecting: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg SyslogConfig) Validate() error {
	s, err := NewSyslog(cfg)
	if err != nil {
		return err
	}
	return s.Close()
}
