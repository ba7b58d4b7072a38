// Package stream accepts byte-stream connections for log inputs (syslog
// over TCP or TLS, JSON lines) and splits them into frames, so that one
// misbehaving or hostile sender costs nobody else anything and every byte
// that arrives is either returned in a frame or counted.
//
// It has two parts: a [Listener] that admits connections under
// per-source and global limits and enforces deadlines on what a sender
// owes, and a [Framer] that finds frame boundaries (RFC 6587) with bounded
// memory; the listener also reads the PROXY protocol header of
// connections that come through a load balancer. The acknowledging inputs
// built on it have packages of their own: stream/relp (RELP sessions on
// the listener's connections) and stream/hec (a Splunk HTTP Event
// Collector receiver); datagram inputs (syslog over UDP) have stream/udp,
// and stream/tlscert keeps the server certificates of TLS listeners;
// stream/streamhttp serves net/http on a listener. Package input turns the
// frames of its connections into engine events (syslog, JSON lines). The
// package imports nothing of relaykit's but the root's vocabulary (for
// relaykit.FieldError), and one module besides the standard library:
// github.com/pires/go-proxyproto, for the PROXY protocol header.
//
// # Shutdown
//
// Ending [Listener.Serve]'s context (or Close) stops accepting and ends
// every connection's reads; the handlers hand over what they read, and
// Serve returns once they have. Push what they read with a context that
// outlives the listener's (until the shutdown deadline): ending both
// together drops every frame read and not handed over. The root package's
// example SyslogToSentinel shows a whole agent's order:
// https://pkg.go.dev/github.com/relaykit/relaykit#example-package-SyslogToSentinel
//
// # Serving HTTP
//
// A server that runs its own accept loop, such as net/http's, takes the
// listener as a net.Listener: [Listener.NetListener]. Its connections get
// the same per-source and global limits and the same TLS handshake
// deadline; the server's ConnState hook tells the listener which are idle
// between requests, the only ones it evicts (streamhttp.ConnState for
// net/http), and the server's own deadlines replace IdleTimeout and
// FrameTimeout. See [NetListener]. Package stream itself does not import
// net/http.
//
// # PROXY protocol
//
// Behind a load balancer or proxy that forwards TCP (HAProxy, nginx's
// stream module, a cloud network load balancer), every connection comes
// from the balancer's address. With [Config].ProxyProtocol the listener
// reads the PROXY protocol header the balancer sends first (version 1,
// text, or version 2, binary; HAProxy's specification, parsed by
// github.com/pires/go-proxyproto), and the sender it names is the
// connection's source everywhere: [Conn.Source], Conn.RemoteAddr (and
// LocalAddr, the address the sender connected to), MaxConnsPerSource, and
// over a [NetListener] the server's RemoteAddr (http.Request.RemoteAddr,
// gRPC's peer). [Conn.Via] names the balancer. A version 2 LOCAL header
// (the balancer's own connection, a health check) and a version 1
// UNKNOWN one keep the connection's own address.
//
// Only the addresses in [Config].ProxyAllowed may send a header. With
// ProxyRequired a connection from any other address is closed at accept,
// and one from an allowed address must begin with a header; with
// ProxyOptional a connection without a header is served as a direct
// sender, and one from an address not allowed is closed if it sends a
// header. The header is read in the connection's goroutine (never in the
// accept loop), before the TLS handshake and under the same
// HandshakeTimeout from accept. A connection is refused, closed before
// its handler (or server) sees it, for a header from an address not
// allowed, a header that cannot be read, a missing one, or one not
// complete in time: each costs its connection alone, is counted by
// reason ([Stats].ProxyNotAllowed, ProxyMalformed, ProxyMissing,
// ProxyTimeout), and is logged once per episode (refusals of one reason
// less than a minute apart). With ProxyOptional, a connection that sends
// nothing within HandshakeTimeout is served as a direct sender that has
// not spoken yet; one that sent part of a header is cut. A version 1
// header must arrive in one read (go-proxyproto's rule against senders
// that trickle it; balancers send it in one segment), and a version 2
// header is at most 4 KiB beyond its fixed part (go-proxyproto's
// MaxV2HeaderSize).
//
// The connections from an allowed address are charged to the source
// their header names, so MaxConnsPerSource limits each sender behind the
// balancer and not the balancer itself; MaxConns still counts them all,
// and until its header is read a connection is idle (it may be evicted
// for a newcomer). Reading the header costs once per connection (a
// 512-byte buffer from a pool, and what go-proxyproto allocates to parse
// it); after it, reads go to the socket as before.
//
// # Connection limits
//
// [Config].MaxConnsPerSource (64 by default) caps the connections one
// source IP address holds; more are refused at accept
// ([Stats].RefusedPerSource). [Config].MaxConns (1024) caps them all: when
// it is reached, a new connection evicts the longest-idle open connection,
// the one whose handler has waited longest in [Conn.Read] for data
// ([Stats].Evicted), instead of being refused. A connection whose handler
// is busy (parsing, or blocked by backpressure) is not idle and is never
// evicted, since closing it would lose what its sender has in flight; if
// none is idle, the newcomer is refused ([Stats].RefusedFull). The reasoning: a slot held by a connection that sends
// nothing is worth less than a new connection, which is probably a sender
// that has something to send; refusing newcomers at the limit lets a port
// scanner or a sender that leaks connections lock every other sender out
// for the whole idle timeout. A busy sender is never the longest idle, and
// the per-source cap keeps one host from evicting everyone else: with the
// defaults, 16 hosts' worth of idle connections are needed to fill the
// listener. [Config].RefuseWhenFull restores refusal
// ([Stats].RefusedFull).
//
// # Accept errors
//
// A failed accept never ends [Listener.Serve]: EMFILE and ENFILE (out of
// file descriptors), ENOBUFS and ENOMEM pass, and the connections wait in
// the kernel's backlog meanwhile. The listener counts each error
// ([Stats].AcceptErrors), waits 5 ms, doubling after each further error up
// to 1 s, as net/http's Server.Serve does for temporary errors, and accepts
// again; [Config].Logger hears of an episode once when it starts and once
// when an accept succeeds again. Connections are not evicted to free a
// descriptor: what holds the descriptors may be anything in the process.
//
// # Deadlines
//
// Three deadlines bound what a sender can hold without sending:
//
//   - IdleTimeout (10 min): nothing arrived between frames;
//   - FrameTimeout (30 s): a frame that has started is not complete. Moving
//     the read deadline on every read, as an idle timeout does, lets a
//     sender that trickles a byte every few seconds hold its connection
//     forever; the frame deadline is fixed when the frame starts;
//   - HandshakeTimeout (10 s): the PROXY header and the TLS handshake
//     are not done, measured from accept. They run in the connection's
//     goroutine, never in the accept loop.
//
// Each cut is counted by reason ([Stats].CutIdle, CutFrameTimeout,
// CutHandshakeTimeout; ProxyTimeout for a PROXY header). The idle and
// frame deadlines are set by [Conn.Read], which knows from the [Framer]
// reading it whether a frame is in progress.
//
// # Framing
//
// [Auto] framing decides once per connection, from the first frame: "LEN
// SP <" starts octet counting (RFC 6587 section 3.4.1), anything that does
// not start with "LEN SP" delimited framing. The decision is kept for the
// connection, as syslog-ng's syslog() source does (lib/logproto/
// logproto-auto-server.c looks at the first bytes of the connection).
// Deciding per frame instead made one octet-counted frame whose message did
// not start with '<' switch to LF framing and glue every later frame of the
// connection into one event. rsyslog's imtcp decides per frame
// (runtime/tcps_sess.c: a frame that starts with a digit is octet-counted),
// so a delimited line that starts with "123 " would be misread there; here
// it stays a line.
//
// A first frame "LEN SP x" with x not '<' (an octet-counting sender whose
// template has no PRI, or a line that starts with a number) is read by
// what follows the header. When its LEN bytes hold no LF, or an LF only as
// their last byte (senders that count their trailer), it is an
// octet-counted frame and the connection is octet-counted. When an LF
// comes earlier ("123 apples\n") it is a line, and the next frame decides
// again: a connection of such lines stays delimited, and "7 hello\n"
// followed by octet-counted frames costs nothing but the odd first line.
//
// # Framing errors and resynchronisation
//
// On an octet-counted connection, a header that is not "LEN SP" with
// 1 <= LEN <= [FramerConfig].MaxOctetCount is a framing error. The frame
// that starts there ends at the next LF or at the next place where a header
// "LEN SP <" starts, whichever comes first; it is returned flagged
// [FramingError] and counted, and octet counting resumes. A wrong LEN thus
// costs its own frame: one too small leaves the rest of its message, which
// comes out as a frame flagged FramingError; one too large takes the head
// of the next frame into its own (the framer cannot know before the next
// header fails), and the rest of that frame comes out flagged. Frames
// before and after arrive whole. rsyslog's imtcp (runtime/tcps_sess.c)
// reads a frame that does not start with a digit up to the next LF, so on a
// connection without LFs everything after a wrong LEN can become one
// message; syslog-ng closes the connection ("Invalid frame header").
//
// A place where a header may start is a run of at most 13 digits, not
// following a digit, followed by " <". The frame cut short by a too-small
// LEN may end in digits of its own ("port 22" then "85 <13>..."), so the
// framer chooses which digits of the run are the header: the longest valid
// count whose frame is followed by the end of the stream, an LF or another
// "LEN SP <" (the digits before it are discarded, counted in
// DiscardedBytes). To check that, it waits for the first bytes after that
// frame, which a sender that is still sending provides at once; a sender
// that goes quiet right after a framing error holds its next frame until
// more arrives or the connection closes (the frame is then returned), or
// until FrameTimeout cuts the connection (counted in IncompleteBytes). When no count fits, the run starts another bad frame.
// One case cannot be told from a well-formed stream: a frame cut short
// whose rest is only digits without a leading zero ("1" before "53 <"
// reads "153 <"); the header that results is wrong, and the framer
// resynchronises at the frame after the ones it took.
//
// # NUL bytes
//
// RFC 6587 section 3.4.2 names LF as the trailer of non-transparent
// framing and notes that some senders use NUL. The two mainstream daemons
// differ: rsyslog's imtcp ends frames at LF only and keeps a NUL inside a
// message as data (a NUL delimiter is opt-in, AddtlFrameDelimiter=0),
// syslog-ng's text transport ends a message at LF or NUL
// (transport(text-with-nuls) keeps them). A delimited connection here
// takes its trailer from its first frame: when the first frame ends with
// LF, only LF ends frames and a NUL inside a message stays there, whole
// (counted in [FramerStats].NULFrames); when a NUL comes first, the
// connection is a NUL-trailer sender and NUL or LF end frames (an LF right
// after the NUL is part of the trailer). A CR before the LF is removed.
//
// # Accounting
//
// Every byte read is in exactly one of [FramerStats].FrameBytes,
// OverheadBytes (headers, trailers, empty frames), DiscardedBytes (the rest
// of a frame cut at MaxFrame) and IncompleteBytes (a frame the connection
// broke off: reset, deadline, eviction, shutdown). [Counters] gather the
// exceptional ones across the framers of many connections, live; the fuzz
// test checks the sum for any input and any read boundaries.
//
// # Read buffers
//
// A [Framer] reads into a buffer that follows the stream's pace: it starts
// at 4 KiB, doubles while reads come back full (the socket held more than
// the buffer had room for) up to [FramerConfig].ReadSize (64 KiB by
// default), and halves after 16 reads in a row that each filled less than
// an eighth of it. A busy connection is read 64 KiB at a time, about 250
// syslog messages of 256 bytes per read(2) instead of 16; a quiet one
// costs 4 KiB. A [ReadBudget] shared by the framers of a listener bounds
// the total: growth for read-ahead stops at its limit, while what a frame
// needs (up to MaxFrame) is taken regardless, so a full budget slows
// readers down but never cuts a frame. Buffers come from and go back to
// pools per size ([Framer.Release]). [FramerConfig].BeforeRead runs before
// each read, once the frames of the previous read have all been returned:
// the place to hand them on as one batch before the read waits.
//
// # Concurrency and ownership
//
// A [Listener]'s methods are safe for concurrent use. [Listener.Serve] owns
// every goroutine it starts (one per connection, running the [Handler]) and
// returns only after all of them have. A [Conn] and the [Framer] reading it
// belong to the handler's goroutine; the listener ends a connection from
// other goroutines only by closing it or moving its read deadline. A frame
// returned by [Framer.Next] is valid until the next call; copy what you
// keep. Once warm, Next does not allocate; [Conn.Read] reads the clock and
// sets the deadline once per read (not per frame).
package stream
