package delivery

// Batches encoded ahead: a sink that is a relaykit.RequestSink has each
// batch encoded (and compressed) by EncodeRequests on Send's goroutine,
// before the write-ahead; the entry, the spool record and the sender then
// hold the requests, and send them with SendRequests as they are, from
// memory or from disk. Events are decoded from a request only to
// dead-letter the ones the destination refused permanently; a request of
// which part was delivered is cut (CutRequest) to the part still to send.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
)

// maxPooledRequests bounds the buffers a pooled entry keeps (bodies and
// indexes of its requests): an entry that grew larger, from an unusual
// batch, is left to the GC.
const maxPooledRequests = 8 << 20

// encoder returns sink as a RequestSink, or nil.
func encoder(sink relaykit.Sink) relaykit.RequestSink {
	enc, _ := sink.(relaykit.RequestSink)
	return enc
}

// pooledBytes returns the capacity of the buffers of e's requests.
func (e *entry) pooledBytes() int {
	n := 0
	for _, r := range e.reqs[:cap(e.reqs)] {
		n += cap(r.Body) + cap(r.Index)
	}
	return n
}

// encode encodes batch into a pooled entry of requests. Events the sink
// cannot send at all are dead-lettered (or counted dropped) at once, here;
// when every event was, it returns nil, true. It returns nil, false when
// the sink could not encode the batch: the Queue then stores its events.
func (q *Queue) encode(ctx context.Context, batch []relaykit.Event) (*entry, bool) {
	e := reqEntries.Get().(*entry)
	reqs, err := q.enc.EncodeRequests(e.reqs[:0], batch)
	e.reqs = reqs
	if err != nil {
		var be *relaykit.BatchError
		if !errors.As(err, &be) {
			e.release()
			if !q.encodeFailing.Swap(true) {
				q.log.Warn("sink cannot encode batches ahead: spooling their events", "err", err)
			}
			return nil, false
		}
		at := 0
		for _, f := range be.Failed {
			from, to := max(f.From, at), min(f.To, len(batch))
			if from >= to {
				continue
			}
			n := int64(to - from)
			q.c.in.Add(n)
			q.c.pending.Add(n)
			q.deadLetter(ctx, batch[from:to], f.Reason, f.Err)
			at = to
		}
	} else if q.encodeFailing.Load() {
		q.encodeFailing.Store(false)
	}
	e.n0 = e.pending()
	if e.n0 == 0 {
		e.release()
		return nil, true
	}
	return e, true
}

// attemptsReq is attempts for a batch of requests: it sends *reqs until
// every event is delivered or dead-lettered (done), or the retry budget is
// spent, with the same probes, timeouts, waits and budget. It leaves in
// *reqs the requests still to send, in order (settled ones are moved past
// its length, so that their buffers stay with the entry), and returns how
// many events left it this call.
func (q *Queue) attemptsReq(ctx context.Context, reqs *[]relaykit.Request) (done bool, sent int) {
	if d := q.untilAllowed(); d > 0 && !sleepCtx(ctx, d) {
		return false, 0
	}
	probe := q.unhealthy.Load()
	start := time.Now()
	backoff := q.cfg.InitialBackoff
	for attempt := 1; ; attempt++ {
		timeout, nsend := q.attemptTimeout(), len(*reqs)
		if probe {
			// The oldest event alone: its request is cut in two once.
			*reqs = q.splitFirst(*reqs)
			timeout, nsend = q.cfg.ProbeInterval, 1
		}
		began := time.Now()
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := q.enc.SendRequests(actx, (*reqs)[:nsend])
		timedOut := err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		q.c.attempts.Add(1)
		var delivered, settled int
		*reqs, delivered, settled = q.settleReqs(ctx, *reqs, nsend, err)
		sent += settled
		q.attempted(delivered, probe, time.Since(began), timedOut, err == nil)
		if len(*reqs) == 0 {
			return true, sent
		}
		if probe && err == nil {
			probe = false // alive: send the rest
			start, attempt = time.Now(), 0
			continue
		}
		if !q.retryWait(ctx, err, probe, start, attempt, &backoff) {
			return false, sent
		}
	}
}

// splitFirst returns reqs with its first request, when it holds more than
// one event, replaced by two: its first event alone, and the rest. A
// request that cannot be cut stays as it is (and is the probe).
func (q *Queue) splitFirst(reqs []relaykit.Request) []relaykit.Request {
	r := &reqs[0]
	if r.Events <= 1 {
		return reqs
	}
	a, err := q.enc.CutRequest(r, 0, 1)
	if err != nil {
		return reqs
	}
	b, err := q.enc.CutRequest(r, 1, r.Events)
	if err != nil {
		return reqs
	}
	out := make([]relaykit.Request, 0, len(reqs)+1)
	out = append(out, a, b)
	return append(out, reqs[1:]...)
}

// settleReqs accounts for the outcome of one SendRequests of reqs[:nsent]:
// delivered runs are counted (and given to the hooks), permanently refused
// runs decoded and dead-lettered, and the requests still to send are
// returned in order: whole ones as they are, the retryable part of a
// request of which part was settled cut to that part. It returns how many
// events were delivered and how many settled (delivered, dead-lettered or
// dropped).
func (q *Queue) settleReqs(ctx context.Context, reqs []relaykit.Request, nsent int, err error) ([]relaykit.Request, int, int) {
	total := 0
	for i := range reqs[:nsent] {
		total += reqs[i].Events
	}
	var failed []relaykit.FailedRange
	if err != nil {
		failed = relaykit.AsBatchError(err, total).Failed
	}
	// Requests kept whole are swapped to the front (w), settled ones to
	// the back: every buffer stays in the slice. A request of which part
	// was settled makes the result a new slice (a slow path).
	w := 0
	var out []relaykit.Request // non-nil once a request was cut
	delivered, settled, off, fi := 0, 0, 0, 0
	for i := range nsent {
		r := &reqs[i]
		n := r.Events
		// The failed runs within [off, off+n), relative to the request.
		var runs []relaykit.FailedRange
		for ; fi < len(failed) && failed[fi].From < off+n; fi++ {
			f := failed[fi]
			from, to := max(f.From, off)-off, min(f.To, off+n)-off
			if from < to {
				f.From, f.To = from, to
				runs = append(runs, f)
			}
			if failed[fi].To > off+n {
				break // it goes on into the next request
			}
		}
		off += n
		if len(runs) == 1 && runs[0].From == 0 && runs[0].To == n && !runs[0].Permanent {
			// Not delivered at all: sent again as it is.
			if out != nil {
				out = append(out, *r)
			} else {
				reqs[w], reqs[i] = reqs[i], reqs[w]
				w++
			}
			continue
		}
		d, s, rest := q.settleRequest(ctx, r, runs)
		delivered += d
		settled += s
		if len(rest) > 0 && out == nil {
			out = append(make([]relaykit.Request, 0, len(reqs)+len(rest)), reqs[:w]...)
		}
		out = append(out, rest...)
	}
	if out == nil {
		for i := nsent; i < len(reqs); i++ {
			reqs[w], reqs[i] = reqs[i], reqs[w]
			w++
		}
		return reqs[:w], delivered, settled
	}
	return append(out, reqs[nsent:]...), delivered, settled
}

// settleRequest accounts for a request of which part was settled by one
// attempt (runs are its undelivered events, by position): the rest was
// delivered, the permanent runs are dead-lettered, and the retryable runs
// are returned cut to requests of their own. It returns the events
// delivered and settled.
func (q *Queue) settleRequest(ctx context.Context, r *relaykit.Request, runs []relaykit.FailedRange) (delivered, settled int, rest []relaykit.Request) {
	var evs []relaykit.Event // decoded once, for dead letters
	var decodeErr error
	decoded := false
	at := 0
	for _, f := range runs {
		if f.From > at {
			q.deliveredReq(r, f.From-at)
			delivered += f.From - at
		}
		at = f.To
		if f.Permanent {
			if !decoded {
				decoded = true
				evs, decodeErr = q.enc.DecodeRequest(nil, r)
				if decodeErr == nil && len(evs) != r.Events {
					decodeErr = fmt.Errorf("decoded %d events of %d", len(evs), r.Events)
				}
			}
			if decodeErr != nil {
				q.log.Error("cannot decode a refused request to dead-letter its events: dropped", "reason", f.Reason, "events", f.To-f.From, "err", decodeErr)
				q.drop(f.Reason, int64(f.To-f.From))
			} else {
				q.deadLetter(ctx, evs[f.From:f.To], f.Reason, f.Err)
			}
			settled += f.To - f.From
			continue
		}
		c, err := q.enc.CutRequest(r, f.From, f.To)
		if err != nil {
			q.log.Error("cannot cut a request to retry part of it: dropped", "events", f.To-f.From, "err", err)
			q.drop(relaykit.ReasonSpoolCorrupt, int64(f.To-f.From))
			settled += f.To - f.From
			continue
		}
		rest = append(rest, c)
	}
	if at < r.Events {
		q.deliveredReq(r, r.Events-at)
		delivered += r.Events - at
	}
	return delivered, settled + delivered, rest
}

// deliveredReq counts n events of r as delivered.
func (q *Queue) deliveredReq(r *relaykit.Request, n int) {
	if n <= 0 {
		return
	}
	q.c.delivered.Add(int64(n))
	q.c.pending.Add(-int64(n))
	if h := q.cfg.Hooks.OnDeliveredRun; h != nil {
		h(n, r.OldestReceive, r.NewestReceive)
	}
}

// unsendable drops the events of a spooled batch of requests the sink
// cannot send (it is not a RequestSink), counted as rejected.
func (q *Queue) unsendable(c *diskBatch) {
	q.log.Error("spooled requests cannot be sent by this destination (its type changed?): dropped",
		"format", c.reqs[0].Format, "events", c.n0)
	q.drop(relaykit.ReasonRejected, int64(c.n0))
}
