// Package relp is a RELP server: rsyslog's Reliable Event Logging Protocol,
// answered only for what its handler accepted, so that a sender (rsyslog's
// omrelp) resends what a relay did not take.
//
// A [Server] serves RELP, rsyslog's Reliable Event Logging Protocol
// (librelp's doc/relp.md; rsyslog's omrelp sends it, imrelp receives it),
// on the connections of a Listener, plain or TLS: [Server.ServeConn] is
// the listener's handler (stream.Config.Handler). Frames are "TXNR SP COMMAND
// SP DATALEN [SP DATA] LF". The session answers "open" with the offers it
// uses (relp_version, relp_software, commands=syslog), hands "syslog"
// frames to a [Handler], answers "close" and ends, and sends the
// "serverclose" hint (txnr 0) when it ends the session itself (shutdown,
// eviction, deadlines, a failed handler). Transaction numbers must follow
// each other from 1 (after 999999999 comes 1), as librelp's server
// requires.
//
// Acknowledgement follows the delivery contract: the session collects the
// syslog frames already received, up to [Config].Window (128, rsyslog's
// default window), hands them to the handler as one batch and answers each
// "200 OK", in order, only after the handler returned nil. While the
// handler blocks the session neither reads nor answers, so a client with a
// full window waits: back-pressure, not loss. When the handler fails, the
// session is closed without an answer for the batch, and the client sends
// the unanswered frames again after it reconnects (librelp resends its
// unacknowledged frames with new transaction numbers). Duplicates arise
// only for frames the handler accepted whose answer never reached the
// client (a broken connection, or a crash between acceptance and answer):
// at most a window per broken session. [Stats].AcceptedUnanswered
// counts those this process saw.
//
// This package does not parse syslog: a [Message] holds the
// message bytes as sent, valid until the handler returns. A frame that
// breaks the protocol (a data length that does not match the data, a
// command other than open, syslog and close, a transaction number out of
// sequence, syslog before open), a frame announcing more than
// [Config].MaxDataBytes, and a peer that never completes a frame (the
// listener's FrameTimeout) each close only their own session, with an
// error wrapping [ErrProtocol] or [ErrTooLarge] (or the
// listener's stream.ErrFrameTimeout) and a counter. Every byte a session reads
// is in exactly one of [Stats].MessageBytes, OverheadBytes,
// DiscardedBytes and IncompleteBytes.
//
// # Concurrency
//
// A [Server] is safe for concurrent use; [Server.ServeConn] runs one
// session on the calling goroutine (one per connection, as
// stream.Listener.Serve runs it). The handler is called from that
// goroutine and must not retain the batch.
package relp
