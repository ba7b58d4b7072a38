package forward

// Design of the sender core (shared by every HTTP sink: HEC, Sentinel).
//
// A sink describes its wire protocol in a [protocol] value and gets a
// *sender from newSender(kind, HTTPConfig, protocol, maxReq, maxEvent).
// Its Send method is then just s.send(ctx, batch), and Stats is
// s.stats(), Close is s.close().
//
// protocol (all funcs must be safe for concurrent use):
//   - url, contentType: where and what to POST.
//   - prefix, separator, suffix: framing of one request body. HEC:
//     nil/nil/nil (concatenated objects); Sentinel: "[", ",", "]".
//   - encode: append ONE event to dst (append style, no allocation). An
//     error reports that event as permanently failed, ReasonRejected.
//   - reject (optional): called before encoding each event (and again for
//     events re-sent after a partial accept); a non-nil error reports the
//     event as ReasonRejected without sending it (HEC: indexes the
//     destination refused).
//   - prepare (optional): set per-request headers (auth, channel, request
//     id) on the *http.Request; req.Context() is the request's context. An
//     error counts as a retryable failure of the request.
//   - classify: turn a response (status, header, body <= 64 KiB, events in
//     the request, access to the request's events) into a verdict: OK
//     (with optional ackID), Retry (with retryAfter: reported retryable),
//     Reauth (send again at once, once per request, then permanent
//     ReasonUnauthorized: Sentinel's 401), Split (413: halve; one event ->
//     ReasonTooLarge), Fatal (whole request permanent with reason),
//     Partial (events [0,index) accepted, event index permanent with
//     reason, the rest sent on). classifyHTTP gives the generic mapping by
//     status.
//   - confirm (optional): called after an OK verdict that carries an
//     ackID >= 0; it may block (HEC indexer acknowledgement) and returns
//     OK, or Retry when the acknowledgement did not come in time.
//   - health (optional): checked before the first request and before the
//     next one after a retryable failure; an error fails the request as
//     retryable without sending data.
//
// The core encodes a batch into pooled request buffers, splitting at
// MaxRequestBytes (uncompressed, framing included) and refusing events over
// MaxEventBytes (ReasonTooLarge); gzips each request once with a pooled
// klauspost writer (AppendGzip); sends up to Concurrency requests at once
// (a semaphore shared by all Send calls; Send waits for its own requests);
// makes ONE attempt per request: what fails is reported, never retried
// here (the retry loop is delivery.Queue's). Only protocol steps send a
// request's events again: a 413 split, Sentinel's re-authentication, the
// rest of an HEC request after a partial accept. Send returns nil when
// every event was delivered, else a *relaykit.BatchError listing every
// undelivered run with its reason (permanent, or retryable with the
// destination's RetryAfter), wrapped with ctx.Err() when ctx ended.
//
// Requests encoded ahead (requests.go) go through the same pack (split,
// time span, refusals) and deliver (classification, protocol steps):
// encodeRequests seals each packed request into a relaykit.Request
// instead of dispatching it, and sendRequests dispatches requests whose
// body is the stored one (request.stored, sent as it is; unsealed, that
// is decompressed, only when a protocol step rebuilds it). Their events
// are decoded (batchState.event) only when a protocol step needs one.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// protocol is what an HTTP sink tells the sender core; see the design note.
type protocol struct {
	url         string
	contentType string
	prefix      []byte
	separator   []byte
	suffix      []byte
	encode      func(dst []byte, e *relaykit.Event) ([]byte, error)
	reject      func(e *relaykit.Event) error
	prepare     func(req *http.Request) error
	classify    func(r *response) verdict
	confirm     func(ctx context.Context, r *response, v verdict) verdict
	health      func(ctx context.Context) error

	// format is the family of the bodies (Request.Format without its
	// "+gzip"): "sentinel.Syslog", "hec.event", ...
	format string
	// rejecting (optional) reports whether reject may refuse anything now,
	// so that a request sent from its stored body is decoded for reject
	// only when it may.
	rejecting func() bool
	// decode (optional) appends the event encoded in one element of a
	// body of the given family to dst; it reports false for a family it
	// does not decode.
	decode func(dst []relaykit.Event, family string, enc []byte) ([]relaykit.Event, bool, error)
	// rowTime and maxSpan (optional): no request holds events whose
	// rowTime lie maxSpan or more apart (a Sentinel Auxiliary table's
	// TimeGenerated range).
	rowTime func(e *relaykit.Event) int64
	maxSpan time.Duration
	// maxWire (optional) bounds the body on the wire, compressed: a
	// request whose compressed body is larger is split before it is sent.
	maxWire int
}

// outcome is the core's decision for one response.
type outcome uint8

const (
	outcomeOK outcome = iota
	outcomeRetry
	outcomeReauth
	outcomeSplit
	outcomeFatal
	outcomePartial
)

// verdict is what classify (and confirm) return.
type verdict struct {
	outcome    outcome
	retryAfter time.Duration // outcomeRetry: wait asked by the destination, or 0
	reason     string        // outcomeFatal, outcomePartial: a Reason constant
	index      int           // outcomePartial: the rejected event, 0-based within the request
	code       int           // destination code for SendError.Code, or -1
	ackID      int64         // outcomeOK: acknowledgement id to confirm, or -1
	err        error         // what went wrong (no secrets); nil for OK
	status     int           // HTTP status, set by the core
}

// response is what classify sees of one HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte // at most maxResponseBody bytes; valid only during classify/confirm
	Events int    // number of events in the request

	req *request
	st  *batchState
}

// Event returns event i (0-based) of the request.
func (r *response) Event(i int) *relaykit.Event { return r.st.event(int(r.req.idx[i])) }

const maxResponseBody = 64 << 10

// classifyHTTP is the generic mapping by HTTP status: 2xx OK; 408, 429 and
// 5xx retryable (with the Retry-After the response names); 413 split; 401
// and 403 unauthorized; any other status rejected.
func classifyHTTP(r *response) verdict {
	v := verdict{code: -1, ackID: -1}
	switch s := r.Status; {
	case s >= 200 && s < 300:
		v.outcome = outcomeOK
		return v
	case s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s >= 500:
		v.outcome = outcomeRetry
		v.retryAfter = parseRetryAfter(r.Header, time.Now())
	case s == http.StatusRequestEntityTooLarge:
		v.outcome = outcomeSplit
	case s == http.StatusUnauthorized, s == http.StatusForbidden:
		v.outcome, v.reason = outcomeFatal, relaykit.ReasonUnauthorized
	default:
		v.outcome, v.reason = outcomeFatal, relaykit.ReasonRejected
	}
	v.err = errors.New(http.StatusText(r.Status))
	return v
}

// span is the encoded bytes of one event within request.raw.
type span struct{ start, end int }

// request is one request body being built or sent, pooled by the sender.
type request struct {
	raw   []byte  // prefix, events joined by separator (suffix appended by seal)
	spans []span  // encoded events within raw
	idx   []int32 // index of each event in the batch
	z     []byte  // gzipped body
	resp  []byte  // response body scratch

	// stored is the body of a Request encoded ahead, as it goes on the
	// wire (raw is empty until a protocol step needs it: see open); gzip
	// says whether it is compressed. Nil for a request built here.
	stored []byte
	gzip   bool
	// tmin and tmax are the least and greatest rowTime of its events
	// (with protocol.maxSpan); rmin and rmax their receive times.
	tmin, tmax, rmin, rmax int64
}

// sender is the core; see the design note. Safe for concurrent use.
type sender struct {
	dest   string
	cfg    HTTPConfig
	p      protocol
	client *http.Client
	owned  bool // client built by us: close idle connections on close
	sem    *semaphore.Weighted
	reqs   sync.Pool // *request
	c      counters
	// formatGzip is the Format of gzipped requests: p.format+"+gzip".
	formatGzip string

	unauthorized atomic.Bool // reported once until a success
	unhealthy    atomic.Bool // a retryable failure was seen: check health before sending
}

func newSender(kind string, cfg HTTPConfig, p protocol, maxReq, maxEvent int) (*sender, error) {
	cfg, err := cfg.withDefaults(kind, maxReq, maxEvent)
	if err != nil {
		return nil, relaykit.FieldIn("HTTP", err)
	}
	if len(p.prefix)+len(p.suffix) >= cfg.MaxRequestBytes {
		return nil, cfgerr.New(ErrInvalidConfig, "HTTP.MaxRequestBytes", "%d is too small", cfg.MaxRequestBytes)
	}
	s := &sender{dest: cfg.Name, cfg: cfg, p: p, client: cfg.HTTPClient, sem: semaphore.NewWeighted(int64(cfg.Concurrency)),
		formatGzip: p.format + gzipSuffix}
	if s.client == nil {
		s.client = newHTTPClient(cfg.TLS, cfg.Timeout, cfg.Concurrency)
		s.owned = true
	}
	s.unhealthy.Store(p.health != nil)
	return s, nil
}

func (s *sender) stats() Stats { return s.c.snapshot() }

// close releases the idle connections of the sender's own client.
func (s *sender) close() {
	if s.owned {
		s.client.CloseIdleConnections()
	}
}

// maxPooled is the largest buffer kept in the pool; larger ones (a 413
// split of a huge request, a big response) are left to the GC.
func (s *sender) maxPooled() int { return 2*s.cfg.MaxRequestBytes + 4096 }

func (s *sender) getRequest() *request {
	r, _ := s.reqs.Get().(*request)
	if r == nil {
		r = new(request)
	}
	r.raw = append(r.raw[:0], s.p.prefix...)
	r.spans = r.spans[:0]
	r.idx = r.idx[:0]
	r.z = r.z[:0]
	r.stored, r.gzip = nil, !s.cfg.DisableGzip
	r.tmin, r.tmax, r.rmin, r.rmax = 0, 0, 0, 0
	return r
}

func (s *sender) putRequest(r *request) {
	lim := s.maxPooled()
	if cap(r.raw) > lim || cap(r.z) > lim {
		return
	}
	s.reqs.Put(r)
}

// add appends the encoded event to r if it fits in maxReq; it reports false
// (leaving r unchanged) when it does not.
func (s *sender) add(r *request, enc []byte, i int32) bool {
	need := len(r.raw) + len(enc) + len(s.p.suffix)
	if len(r.spans) > 0 {
		need += len(s.p.separator)
	}
	if need > s.cfg.MaxRequestBytes {
		return false
	}
	if len(r.spans) > 0 {
		r.raw = append(r.raw, s.p.separator...)
	}
	start := len(r.raw)
	r.raw = append(r.raw, enc...)
	r.spans = append(r.spans, span{start, len(r.raw)})
	r.idx = append(r.idx, i)
	return true
}

// batchState is the shared state of one send call.
type batchState struct {
	s     *sender
	batch []relaykit.Event
	// reqs are the requests of a SendRequests call (batch is nil); their
	// events are decoded into batch only when a protocol step needs them
	// (see event).
	reqs    []relaykit.Request
	decoded bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	// failed lists the undelivered runs.
	failed []relaykit.FailedRange
}

// event returns event i of the batch. For a SendRequests call it decodes
// the requests' events the first time (a slow path: HEC's incorrect
// index, a reject after a split); an event that cannot be decoded is
// returned empty.
func (st *batchState) event(i int) *relaykit.Event {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.reqs != nil && !st.decoded {
		st.decoded = true
		for j := range st.reqs {
			n := len(st.batch)
			evs, err := st.s.decodeRequest(st.batch, &st.reqs[j])
			if err != nil || len(evs)-n != st.reqs[j].Events {
				evs = append(evs[:n], make([]relaykit.Event, st.reqs[j].Events)...)
			}
			st.batch = evs
		}
	}
	if i < 0 || i >= len(st.batch) {
		return new(relaykit.Event)
	}
	return &st.batch[i]
}

// send is Sink.Send for every HTTP sink.
func (s *sender) send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return ctx.Err()
	}
	st := &batchState{s: s, batch: batch}
	s.pack(ctx, st, func(r *request) error { return s.dispatch(ctx, st, r) })
	return s.finish(ctx, st)
}

// finish waits for the requests of st and returns Send's error.
func (s *sender) finish(ctx context.Context, st *batchState) error {
	st.wg.Wait()
	if len(st.failed) == 0 {
		return nil
	}
	be := st.batchErr()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("forward: send to %s: %w (%w)", s.dest, err, be)
	}
	return be
}

// pack encodes st.batch into requests of at most MaxRequestBytes (and,
// with protocol.maxSpan, less than maxSpan between their rowTimes) and
// hands each to flush, which owns it from then on; events the protocol
// refuses or that are too large are reported failed. When flush fails (ctx
// ended), the request and the events not packed yet are reported with
// ReasonShutdown and pack returns.
func (s *sender) pack(ctx context.Context, st *batchState, flush func(r *request) error) {
	batch := st.batch
	r := s.getRequest()
	// scratch holds an event encoded alone when it did not fit the open
	// request; it lives in its own pooled request.
	var scratch *request
	for i := range batch {
		e := &batch[i]
		if err := ctx.Err(); err != nil {
			s.failRange(st, i, len(batch), relaykit.ReasonShutdown, err)
			break
		}
		if s.p.reject != nil {
			if err := s.p.reject(e); err != nil {
				s.failOne(st, i, relaykit.ReasonRejected, err)
				continue
			}
		}
		// Encode in place after a separator; move to a new request if the
		// open one is full.
		mark := len(r.raw)
		if len(r.spans) > 0 {
			r.raw = append(r.raw, s.p.separator...)
		}
		start := len(r.raw)
		var err error
		r.raw, err = s.p.encode(r.raw, e)
		if err != nil {
			r.raw = r.raw[:mark]
			s.failOne(st, i, relaykit.ReasonRejected, err)
			continue
		}
		n := len(r.raw) - start
		if n > s.cfg.MaxEventBytes || len(s.p.prefix)+n+len(s.p.suffix) > s.cfg.MaxRequestBytes {
			r.raw = r.raw[:mark]
			s.failOne(st, i, relaykit.ReasonTooLarge,
				fmt.Errorf("event of %d bytes exceeds the limit of %d", n, min(s.cfg.MaxEventBytes, s.cfg.MaxRequestBytes-len(s.p.prefix)-len(s.p.suffix))))
			continue
		}
		var t int64
		spanOK := true
		if s.p.maxSpan > 0 {
			t = s.p.rowTime(e)
			spanOK = len(r.spans) == 0 || max(r.tmax, t)-min(r.tmin, t) < int64(s.p.maxSpan)
		}
		if spanOK && len(r.raw)+len(s.p.suffix) <= s.cfg.MaxRequestBytes {
			r.spans = append(r.spans, span{start, len(r.raw)})
			r.idx = append(r.idx, int32(i))
			r.note(e, t)
			continue
		}
		// Does not fit: start a new request with this event.
		if scratch == nil {
			scratch = s.getRequest()
		}
		scratch.raw = append(scratch.raw[:0], r.raw[start:]...)
		r.raw = r.raw[:mark]
		if err := flush(r); err != nil {
			s.failRequest(st, r, 0, relaykit.ReasonShutdown, err)
			s.putRequest(r)
			r = nil
			s.failRange(st, i, len(batch), relaykit.ReasonShutdown, err)
			break
		}
		r = s.getRequest()
		s.add(r, scratch.raw, int32(i))
		r.note(e, t)
	}
	if scratch != nil {
		s.putRequest(scratch)
	}
	if r != nil {
		if len(r.spans) > 0 {
			if err := flush(r); err != nil {
				s.failRequest(st, r, 0, relaykit.ReasonShutdown, err)
				s.putRequest(r)
			}
		} else {
			s.putRequest(r)
		}
	}
}

// note records the row time t and the receive time of e, the event just
// added to r.
func (r *request) note(e *relaykit.Event, t int64) {
	if len(r.spans) == 1 {
		r.tmin, r.tmax = t, t
	} else {
		r.tmin, r.tmax = min(r.tmin, t), max(r.tmax, t)
	}
	if rt := e.ReceiveTime; rt != 0 {
		if r.rmin == 0 || rt < r.rmin {
			r.rmin = rt
		}
		r.rmax = max(r.rmax, rt)
	}
}

// dispatch starts delivering r on its own goroutine once a concurrency slot
// is free. On ctx end it returns the error and r stays the caller's.
func (s *sender) dispatch(ctx context.Context, st *batchState, r *request) error {
	if err := s.sem.Acquire(ctx, 1); err != nil {
		return err
	}
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		defer s.sem.Release(1)
		s.deliver(ctx, st, r)
	}()
	return nil
}

// seal finishes r's body: appends the suffix and compresses it when gzip is
// on. It returns the bytes to put on the wire.
func (s *sender) seal(r *request) []byte {
	if r.stored != nil {
		return r.stored
	}
	r.raw = append(r.raw, s.p.suffix...)
	if !r.gzip {
		return r.raw
	}
	// The level is validated by withDefaults, so AppendGzip cannot fail.
	r.z, _ = AppendGzip(r.z[:0], r.raw, s.cfg.GzipLevel)
	return r.z
}

// unseal removes the suffix added by seal so r can be rebuilt; a request
// sent from its stored body is decompressed first (see open). It fails only
// for a stored body that does not match its index.
func (s *sender) unseal(r *request) error {
	if r.stored != nil {
		return s.open(r)
	}
	r.raw = r.raw[:len(r.raw)-len(s.p.suffix)]
	return nil
}

// rebuild returns a new request holding events [from, to) of r, skipping
// those the protocol now rejects (which are reported rejected).
func (s *sender) rebuild(st *batchState, r *request, from, to int) *request {
	n := s.getRequest()
	rejecting := s.p.reject != nil && (s.p.rejecting == nil || s.p.rejecting())
	for j := from; j < to; j++ {
		if rejecting {
			if err := s.p.reject(st.event(int(r.idx[j]))); err != nil {
				s.failOne(st, int(r.idx[j]), relaykit.ReasonRejected, err)
				continue
			}
		}
		sp := r.spans[j]
		s.add(n, r.raw[sp.start:sp.end], r.idx[j])
	}
	n.rmin, n.rmax = r.rmin, r.rmax
	return n
}

// deliver sends r once and returns it to the pool. Every event of r ends
// up counted as sent or reported failed. Only protocol steps send events
// of r again: the halves after a 413, the request after a
// re-authentication, the rest after a partial accept.
func (s *sender) deliver(ctx context.Context, st *batchState, r *request) {
	defer func() {
		if r != nil {
			s.putRequest(r)
		}
	}()
	wire := s.seal(r)
	reauthed := false
	for {
		var v verdict
		var took time.Duration
		healthy := true
		if s.p.maxWire > 0 && len(wire) > s.p.maxWire && len(r.spans) > 1 {
			// Compressed, still over the destination's limit (data that
			// hardly compresses): split it before sending.
			v = verdict{outcome: outcomeSplit, code: -1, ackID: -1,
				err: fmt.Errorf("compressed body of %d bytes exceeds the limit of %d", len(wire), s.p.maxWire)}
			healthy = false
		} else if s.p.health != nil && s.unhealthy.Load() {
			if err := s.p.health(ctx); err != nil {
				healthy = false
				v = verdict{outcome: outcomeRetry, code: -1, ackID: -1, err: fmt.Errorf("health check: %w", err)}
				var se *SendError
				if errors.As(err, &se) {
					v.retryAfter = se.RetryAfter
				}
			} else {
				s.unhealthy.Store(false)
			}
		}
		if healthy {
			v, took = s.attempt(ctx, st, r, wire)
		}
		switch v.outcome {
		case outcomeOK:
			s.accepted(r, 0, len(r.spans), took)
			return
		case outcomeReauth:
			if !reauthed {
				reauthed = true
				continue
			}
			v.reason = relaykit.ReasonUnauthorized
			fallthrough
		case outcomeFatal:
			s.reportFatal(v)
			s.failRequest(st, r, 0, v.reason, s.sendErr(v, false, len(r.spans)))
			return
		case outcomeSplit:
			if err := s.unseal(r); err != nil {
				s.failRequest(st, r, 0, relaykit.ReasonRejected, err)
				return
			}
			if len(r.spans) == 1 {
				s.failRequest(st, r, 0, relaykit.ReasonTooLarge, s.sendErr(v, false, len(r.spans)))
				return
			}
			s.c.splits.Add(1)
			half := len(r.spans) / 2
			a, b := s.rebuild(st, r, 0, half), s.rebuild(st, r, half, len(r.spans))
			s.putRequest(r)
			r = nil
			for _, q := range []*request{a, b} {
				if len(q.spans) > 0 && ctx.Err() == nil {
					s.deliver(ctx, st, q)
				} else {
					if len(q.spans) > 0 {
						s.failRequest(st, q, 0, relaykit.ReasonShutdown, ctx.Err())
					}
					s.putRequest(q)
				}
			}
			return
		case outcomePartial:
			k := v.index
			if k < 0 || k >= len(r.spans) {
				s.failRequest(st, r, 0, v.reason, s.sendErr(v, false, len(r.spans)))
				return
			}
			if err := s.unseal(r); err != nil {
				s.accepted(r, 0, k, took)
				s.failRequest(st, r, k, relaykit.ReasonRejected, err)
				return
			}
			s.accepted(r, 0, k, took)
			s.failOne(st, int(r.idx[k]), v.reason, s.sendErr(v, false, 1))
			rest := s.rebuild(st, r, k+1, len(r.spans))
			s.putRequest(r)
			r = rest
			if len(r.spans) == 0 {
				return
			}
			if err := ctx.Err(); err != nil {
				s.failRequest(st, r, 0, relaykit.ReasonShutdown, err)
				return
			}
			// The destination has not seen the rest yet: send it on.
			wire = s.seal(r)
			reauthed = false
			continue
		}
		// outcomeRetry: reported, not retried here.
		if s.p.health != nil {
			s.unhealthy.Store(true)
		}
		err := s.sendErr(v, true, len(r.spans))
		if cerr := ctx.Err(); cerr != nil {
			s.failRequest(st, r, 0, relaykit.ReasonShutdown, err)
			return
		}
		s.failRequest(st, r, 0, relaykit.ReasonSinkError, err)
		return
	}
}

// attempt makes one HTTP request and classifies the response.
func (s *sender) attempt(ctx context.Context, st *batchState, r *request, wire []byte) (verdict, time.Duration) {
	s.c.requests.Add(1)
	s.c.inFlight.Add(1)
	defer s.c.inFlight.Add(-1)
	began := time.Now()
	resp, body, err := s.exchange(ctx, r, wire)
	if err != nil {
		return verdict{outcome: outcomeRetry, code: -1, ackID: -1, err: err}, 0
	}
	rs := response{Status: resp.StatusCode, Header: resp.Header, Body: body, Events: len(r.spans), req: r, st: st}
	v := s.p.classify(&rs)
	v.status = resp.StatusCode
	if v.outcome == outcomeOK && v.ackID >= 0 && s.p.confirm != nil {
		v = s.p.confirm(ctx, &rs, v)
	}
	return v, time.Since(began)
}

// attemptBody is the request body of one attempt. The transport may read
// and close it after Client.Do has returned (see http.RoundTripper), so
// exchange waits for Close before the buffer under it is reused.
type attemptBody struct {
	bytes.Reader
	once sync.Once
	done chan struct{}
}

func (b *attemptBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return nil
}

// exchange POSTs wire and returns the response, whose body (at most
// maxResponseBody bytes, in r.resp) has been read and closed. It returns
// only once the transport is done with the request body.
func (s *sender) exchange(ctx context.Context, r *request, wire []byte) (*http.Response, []byte, error) {
	actx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	ab := &attemptBody{done: make(chan struct{})}
	ab.Reset(wire)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, s.p.url, ab)
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(len(wire))
	setUserAgent(req)
	req.Header.Set("Content-Type", s.p.contentType)
	if r.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if s.p.prepare != nil {
		if err := s.p.prepare(req); err != nil {
			return nil, nil, err
		}
	}
	s.c.wireBytes.Add(int64(len(wire)))
	// From here on the transport owns ab until it closes it. Cancelling
	// the attempt first aborts a write the server stopped reading.
	defer func() {
		cancel()
		<-ab.done
	}()
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, scrubURLError(err)
	}
	body, rerr := readBody(resp.Body, r.resp[:0])
	_ = resp.Body.Close()
	if cap(body) <= maxResponseBody {
		r.resp = body[:0]
	}
	if rerr != nil && resp.StatusCode < 300 {
		// A success whose body broke off cannot be trusted (HEC puts the
		// code and ackId there): retry.
		return nil, nil, fmt.Errorf("reading response: %w", scrubURLError(rerr))
	}
	return resp, body, nil
}

// readBody reads at most maxResponseBody bytes of b into buf and discards
// (a bounded amount of) the rest so the connection can be reused.
func readBody(b io.Reader, buf []byte) ([]byte, error) {
	lr := io.LimitReader(b, maxResponseBody)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			_, _ = io.CopyN(io.Discard, b, 256<<10)
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// scrubURLError drops the URL from a *url.Error (a user might put
// credentials in it) and keeps the operation and cause.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// sendErr wraps v.err in a *SendError, the failure of a request carrying
// events events.
func (s *sender) sendErr(v verdict, retryable bool, events int) *SendError {
	e := &SendError{Destination: s.dest, StatusCode: v.status, Code: v.code, Retryable: retryable, Err: v.err}
	if retryable {
		e.RetryAfter = v.retryAfter
	}
	if e.Err == nil {
		e.Err = errors.New("failed")
	}
	if h := s.cfg.Hooks.OnSendError; h != nil {
		h(e, events)
	}
	return e
}

func (s *sender) reportFatal(v verdict) {
	if v.reason == relaykit.ReasonUnauthorized && s.unauthorized.CompareAndSwap(false, true) {
		s.cfg.Logger.Error("forward: destination refused the credentials; its events fail permanently until it accepts them",
			"destination", s.dest, "code", v.code)
	}
}

// accepted counts events [from, to) of r (whose raw is unsealed or sealed)
// as delivered.
func (s *sender) accepted(r *request, from, to int, took time.Duration) {
	if from >= to {
		return
	}
	bytes := r.spans[to-1].end - r.spans[from].start + len(s.p.prefix) + len(s.p.suffix)
	s.c.eventsSent.Add(int64(to - from))
	s.c.bytesSent.Add(int64(bytes))
	if s.unauthorized.CompareAndSwap(true, false) {
		s.cfg.Logger.Info("forward: destination accepts the credentials again", "destination", s.dest)
	}
	if h := s.cfg.Hooks.OnSend; h != nil {
		h(s.dest, to-from, bytes, took)
	}
}

// failRequest reports events [from:] of r as undelivered.
func (s *sender) failRequest(st *batchState, r *request, from int, reason string, err error) {
	idx := r.idx[from:]
	for len(idx) > 0 {
		// Runs of consecutive indexes (events rejected in between break them).
		n := 1
		for n < len(idx) && idx[n] == idx[0]+int32(n) {
			n++
		}
		first := int(idx[0])
		s.fail(st, first, first+n, reason, err)
		idx = idx[n:]
	}
}

// failRange reports batch[from:to] as undelivered.
func (s *sender) failRange(st *batchState, from, to int, reason string, err error) {
	if from < to {
		s.fail(st, from, to, reason, err)
	}
}

// failOne reports batch[i] as undelivered.
func (s *sender) failOne(st *batchState, i int, reason string, err error) {
	s.fail(st, i, i+1, reason, err)
}

// permanent reports whether events that failed for reason cannot succeed
// if sent again unchanged.
func permanent(reason string) bool {
	switch reason {
	case relaykit.ReasonRejected, relaykit.ReasonTooLarge, relaykit.ReasonUnauthorized:
		return true
	}
	return false
}

// fail records batch[from:to] for the *relaykit.BatchError that Send
// returns.
func (s *sender) fail(st *batchState, from, to int, reason string, err error) {
	s.c.addFailed(reason, to-from)
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Destination: s.dest, Code: -1, Retryable: !permanent(reason), Err: err}
	}
	f := relaykit.FailedRange{From: from, To: to, Permanent: permanent(reason), Reason: reason, Err: se}
	if !f.Permanent {
		f.RetryAfter = se.RetryAfter
	}
	st.mu.Lock()
	st.failed = append(st.failed, f)
	st.mu.Unlock()
}

// batchErr returns the *relaykit.BatchError of a Send (runs sorted and
// merged); st.failed must not be empty.
func (st *batchState) batchErr() *relaykit.BatchError {
	return newBatchError(st.failed)
}

// newBatchError sorts runs by index and merges adjacent runs that failed
// the same way (reason, permanence and RetryAfter).
func newBatchError(runs []relaykit.FailedRange) *relaykit.BatchError {
	slices.SortFunc(runs, func(a, b relaykit.FailedRange) int { return a.From - b.From })
	out := runs[:1]
	for _, r := range runs[1:] {
		last := &out[len(out)-1]
		if last.To == r.From && last.Reason == r.Reason && last.Permanent == r.Permanent && last.RetryAfter == r.RetryAfter {
			last.To = r.To
			continue
		}
		out = append(out, r)
	}
	return &relaykit.BatchError{Failed: out}
}
