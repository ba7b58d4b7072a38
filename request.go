package relaykit

import "context"

// Request is a batch of events (or part of one) encoded ahead by a
// [RequestSink]: the body of one request exactly as the destination will
// receive it (encoded, compressed, within its limits), with what a queue
// needs to account for it without decoding it. A queue stores Requests
// instead of events (package delivery writes them ahead to its spool), and
// hands them back to the RequestSink that made them, or to one configured
// like it after a restart, to send as they are.
//
// A Request is a plain value; its byte slices belong to whoever holds it
// (the RequestSink's methods read them only during the call, and never
// retain them).
type Request struct {
	// Format names the encoding of Body: the destination kind, the layout
	// and the content encoding, e.g. "sentinel.Syslog+gzip" or
	// "hec.event+gzip". A RequestSink sends as they are only the Requests
	// of formats it sends; it decodes others it knows (see
	// [RequestSink.SendRequests]).
	Format string
	// Events is the number of events encoded in Body. Positions of events
	// within a Request (in a [BatchError] of SendRequests, or for
	// CutRequest) count from 0 to Events.
	Events int
	// OldestReceive and NewestReceive are the least and the greatest
	// non-zero ReceiveTime of the events in Body, in nanoseconds since the
	// Unix epoch; zero when none had one. A queue reports delivery and
	// latency with them.
	OldestReceive, NewestReceive int64
	// Index is the RequestSink's own data about Body (for the forward
	// sinks, where each event's encoding ends in the uncompressed body), so
	// that it can split, cut or decode the Request without parsing it.
	Index []byte
	// Body is the request body as sent, compressed if Format says so.
	Body []byte
}

// RequestSink is a [Sink] that can encode a batch ahead into [Request]
// values and send them later as they are: package delivery detects it and
// then spools and retries the requests, so a batch is encoded and
// compressed once, on the goroutine that hands it to the queue, and sent
// from memory or from disk without being decoded or encoded again. The
// sinks of package forward (HEC, Sentinel) and the OTLP exporter implement
// it; a Sink that cannot encode ahead (Kafka, an archive) implements only
// Sink, and a queue stores its events.
//
// Send, SendRequests and the other methods must be safe for concurrent
// use. SendRequests follows Send's contract exactly (one attempt per
// request, a nil error only when every event was delivered, a
// [*BatchError] for the rest), its event positions counting through the
// requests in order.
type RequestSink interface {
	Sink
	// EncodeRequests appends to dst the requests that carry batch, in
	// order, split at the destination's limits, and returns the extended
	// slice. It reuses the Body and Index buffers of dst's elements beyond
	// len(dst) (up to cap(dst)), so a caller that keeps its slice encodes
	// without allocating once warm. It does not retain batch.
	//
	// Events that cannot be sent at all (too large, invalid for the
	// destination) are left out of the requests and listed, by their
	// index in batch, in a returned *BatchError whose ranges are all
	// permanent: the requests carry every other event. Any other error
	// means nothing was encoded; the caller may fall back to Send.
	EncodeRequests(dst []Request, batch []Event) ([]Request, error)
	// SendRequests sends reqs (made by EncodeRequests, possibly in another
	// process) with one attempt each and reports what was not delivered
	// as Send does, event positions counting through reqs in order (the
	// events of reqs[1] start at reqs[0].Events). A request whose Format
	// the sink does not send as it is (its configuration changed) is
	// decoded and sent as events when the sink can decode it, and reported
	// failed permanently otherwise. It does not retain reqs.
	SendRequests(ctx context.Context, reqs []Request) error
	// CutRequest returns a new Request carrying events [from, to) of r,
	// encoded exactly as they are in r (a queue retries part of a request
	// with it, or probes a destination with one event). It fails for a
	// Format the sink does not know or a damaged r.
	CutRequest(r *Request, from, to int) (Request, error)
	// DecodeRequest appends the events of r to dst, as well as its Format
	// allows: the fields the destination receives, not necessarily every
	// field the events had (a queue dead-letters the events of a request
	// the destination refused with it). It fails for a Format the sink
	// does not know or a damaged r. The events are owned by the caller.
	DecodeRequest(dst []Event, r *Request) ([]Event, error)
}
