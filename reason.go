package relaykit

// Reasons an event is dropped: the one set of names every package of
// relaykit uses in its Stats, its OnDrop hooks and its errors
// ([FailedRange].Reason), and that a relay exports as metric label
// values. They are stable, lower-case, and contain no spaces.
//
// Every OnDrop hook in relaykit has the shape
//
//	OnDrop func(name, reason string, events int)
//
// where name is the input, route, step or destination at which the events
// were dropped, reason one of these constants (or a Sink's own
// FailedRange.Reason), and events their number. Hooks run synchronously on
// the goroutine that dropped them: they must be fast and safe for
// concurrent use.
const (
	// ReasonQueueFull: an input that must not wait (UDP) found the
	// engine's ring full.
	ReasonQueueFull = "queue_full"
	// ReasonRcvbufFull: the kernel dropped a datagram because the input's
	// socket receive buffer was full (SO_RXQ_OVFL).
	ReasonRcvbufFull = "rcvbuf_full"
	// ReasonInvalidJSON: a JSON input line (or body) failed validation.
	ReasonInvalidJSON = "invalid_json"
	// ReasonRateLimit: the event's source exceeded its rate limit (mode
	// drop).
	ReasonRateLimit = "rate_limit"
	// ReasonUnrouted: no route took the event and there is no default.
	ReasonUnrouted = "unrouted"
	// ReasonFiltered: a pipeline step (drop, sample) removed the event.
	ReasonFiltered = "filtered"
	// ReasonNoSink: a route matched the event but has no sink.
	ReasonNoSink = "no_sink"
	// ReasonRejected: the destination refused the event as invalid data;
	// sending it again unchanged cannot succeed.
	ReasonRejected = "rejected"
	// ReasonTooLarge: a single event exceeds the destination's size limit.
	ReasonTooLarge = "too_large"
	// ReasonUnauthorized: the destination refused the credentials.
	ReasonUnauthorized = "unauthorized"
	// ReasonSinkError: a Sink failed without saying why in terms of
	// events (a plain error, not a [*BatchError]).
	ReasonSinkError = "sink_error"
	// ReasonSpoolFull: a full spool refused the batch (policy drop_newest,
	// or a batch larger than the whole spool).
	ReasonSpoolFull = "spool_full"
	// ReasonSpoolOldest: the spool discarded its oldest batches to make
	// room (policy drop_oldest).
	ReasonSpoolOldest = "spool_oldest"
	// ReasonSpoolCorrupt: disk damage destroyed spooled events (a damaged
	// record, a missing segment).
	ReasonSpoolCorrupt = "spool_corrupt"
	// ReasonShutdown: the shutdown deadline came before a destination
	// accepted the events.
	ReasonShutdown = "shutdown"
	// ReasonShutdownUnqueued: an input had read the events, but the
	// shutdown deadline came before the engine took them.
	ReasonShutdownUnqueued = "shutdown_unqueued"
)

// Reasons lists every Reason constant, for a caller that pre-registers
// metric series. The slice must not be modified.
var Reasons = []string{
	ReasonQueueFull, ReasonRcvbufFull, ReasonInvalidJSON, ReasonRateLimit,
	ReasonUnrouted, ReasonFiltered, ReasonNoSink,
	ReasonRejected, ReasonTooLarge, ReasonUnauthorized, ReasonSinkError,
	ReasonSpoolFull, ReasonSpoolOldest, ReasonSpoolCorrupt,
	ReasonShutdown, ReasonShutdownUnqueued,
}
