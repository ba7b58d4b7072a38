package forward

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
)

// A Syslog sink's requests (relaykit.RequestSink) are the framed messages
// of a batch as Send writes them (octet-counted or LF-terminated on
// streams, one message a datagram on udp), and an index of the framed
// messages' lengths:
//
//	index = count:uvarint (len:uvarint)*count

// requestFormat returns the Format of the sink's requests:
// "syslog.<5424|3164>.<octet|lf|dgram>".
func (s *Syslog) requestFormat() string {
	f := "syslog.5424."
	if s.enc.format == SyslogRFC3164 {
		f = "syslog.3164."
	}
	switch {
	case s.udp:
		return f + "dgram"
	case s.enc.lfFraming:
		return f + "lf"
	}
	return f + "octet"
}

var endsPool = sync.Pool{New: func() any { return new([]int) }}

// EncodeRequests appends to dst one request carrying batch: its messages
// formatted and framed exactly as Send writes them (messages over
// MaxMessageSize cut, counted in Truncated), for a queue to store and send
// later with [Syslog.SendRequests]; see [relaykit.RequestSink]. Its Format
// is "syslog.5424" or "syslog.3164", then ".octet", ".lf" or ".dgram". It
// allocates nothing once dst's buffers are warm.
func (s *Syslog) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	if len(batch) == 0 {
		return dst, nil
	}
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, relaykit.Request{})
	}
	q := &dst[len(dst)-1]
	ep := endsPool.Get().(*[]int)
	q.Body, *ep = s.appendBatch(q.Body[:0], (*ep)[:0], batch)
	q.Index = appendEnds(q.Index[:0], *ep)
	endsPool.Put(ep)
	q.Format, q.Events = s.requestFormat(), len(batch)
	q.OldestReceive, q.NewestReceive = 0, 0
	for i := range batch {
		if rt := batch[i].ReceiveTime; rt != 0 {
			if q.OldestReceive == 0 || rt < q.OldestReceive {
				q.OldestReceive = rt
			}
			q.NewestReceive = max(q.NewestReceive, rt)
		}
	}
	return dst, nil
}

// appendEnds appends the index of messages ending at ends.
func appendEnds(dst []byte, ends []int) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ends)))
	prev := 0
	for _, e := range ends {
		dst = binary.AppendUvarint(dst, uint64(e-prev))
		prev = e
	}
	return dst
}

var errSyslogIndex = errors.New("syslog request does not match its index")

// parseEnds appends the ends of r's messages to ends.
func parseEnds(ends []int, r *relaykit.Request) ([]int, error) {
	p := r.Index
	n, k := binary.Uvarint(p)
	if k <= 0 || int(n) != r.Events || n > uint64(len(p)) {
		return ends, errSyslogIndex
	}
	p = p[k:]
	end := 0
	for range int(n) {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(r.Body)) {
			return ends, errSyslogIndex
		}
		p = p[k:]
		end += int(l)
		ends = append(ends, end)
	}
	if end != len(r.Body) || len(p) != 0 {
		return ends, errSyslogIndex
	}
	return ends, nil
}

// SendRequests writes requests made by EncodeRequests, in order, each in
// one attempt as Send writes a batch, and reports what was not written as
// Send does (positions counting through reqs): after a failed request the
// later ones are reported undelivered too, unsent. A request of another
// format (the format or framing changed) is decoded and sent as events.
// See [relaykit.RequestSink].
func (s *Syslog) SendRequests(ctx context.Context, reqs []relaykit.Request) error {
	total := 0
	for i := range reqs {
		total += reqs[i].Events
	}
	if total == 0 {
		return nil
	}
	format := s.requestFormat()
	ep := endsPool.Get().(*[]int)
	defer endsPool.Put(ep)
	off := 0
	for i := range reqs {
		rq := &reqs[i]
		n := rq.Events
		if n == 0 {
			continue
		}
		var err error
		if rq.Format != format {
			var evs []relaykit.Event
			evs, err = s.DecodeRequest(nil, rq)
			if err == nil && len(evs) != n {
				err = errSyslogIndex
			}
			if err != nil {
				return s.failFrom(total, off, off+n, relaykit.FailedRange{Permanent: true, Reason: relaykit.ReasonRejected,
					Err: &SendError{Destination: s.dest, Code: -1, Err: err}})
			}
			err = s.Send(ctx, evs)
		} else {
			*ep, err = parseEnds((*ep)[:0], rq)
			if err != nil {
				return s.failFrom(total, off, off+n, relaykit.FailedRange{Permanent: true, Reason: relaykit.ReasonRejected,
					Err: &SendError{Destination: s.dest, Code: -1, Err: err}})
			}
			err = s.writeLocked(ctx, rq.Body, *ep)
		}
		if err != nil {
			be := relaykit.AsBatchError(err, n)
			var failed []relaykit.FailedRange
			for _, f := range be.Failed {
				f.From += off
				f.To += off
				failed = append(failed, f)
			}
			// The rest is not sent after a failure: undelivered like the
			// last run.
			if last := failed[len(failed)-1]; off+n < total {
				s.failed.Add(int64(total - off - n))
				last.From, last.To = off+n, total
				failed = append(failed, last)
			}
			out := &relaykit.BatchError{Failed: failed}
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("forward: send to %s: %w (%w)", s.dest, cerr, out)
			}
			return out
		}
		off += n
	}
	return nil
}

// writeLocked is write under s.mu, for a stored request.
func (s *Syslog) writeLocked(ctx context.Context, buf []byte, ends []int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.fail(ctx, len(ends), 0, ErrSyslogClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.fail(ctx, len(ends), 0, err)
	}
	return s.write(ctx, buf, ends)
}

// failFrom returns the error of SendRequests when request [from, to) of
// total events failed as f and the rest was not sent (retryable).
func (s *Syslog) failFrom(total, from, to int, f relaykit.FailedRange) error {
	f.From, f.To = from, to
	s.failed.Add(int64(total - from))
	be := &relaykit.BatchError{Failed: []relaykit.FailedRange{f}}
	if to < total {
		be.Failed = append(be.Failed, relaykit.FailedRange{From: to, To: total, Reason: relaykit.ReasonSinkError,
			Err: &SendError{Destination: s.dest, Code: -1, Retryable: true, Err: errors.New("not sent after a failed request")}})
	}
	return be
}

// CutRequest returns a request of the messages [from, to) of r, framed as
// they are; see [relaykit.RequestSink].
func (s *Syslog) CutRequest(r *relaykit.Request, from, to int) (relaykit.Request, error) {
	if from < 0 || to > r.Events || from >= to {
		return relaykit.Request{}, fmt.Errorf("forward: cut [%d, %d) of a request of %d events", from, to, r.Events)
	}
	ends, err := parseEnds(nil, r)
	if err != nil {
		return relaykit.Request{}, err
	}
	start := 0
	if from > 0 {
		start = ends[from-1]
	}
	out := relaykit.Request{Format: r.Format, Events: to - from, OldestReceive: r.OldestReceive, NewestReceive: r.NewestReceive,
		Body: append([]byte(nil), r.Body[start:ends[to-1]]...)}
	rel := make([]int, 0, to-from)
	for _, e := range ends[from:to] {
		rel = append(rel, e-start)
	}
	out.Index = appendEnds(nil, rel)
	return out, nil
}

// DecodeRequest appends the events of r's messages to dst, parsed as the
// syslog inputs parse them (RFC 5424 or RFC 3164, times in UTC); see
// [relaykit.RequestSink].
func (s *Syslog) DecodeRequest(dst []relaykit.Event, r *relaykit.Request) ([]relaykit.Event, error) {
	var framing string
	switch {
	case bytes.HasPrefix([]byte(r.Format), []byte("syslog.5424.")), bytes.HasPrefix([]byte(r.Format), []byte("syslog.3164.")):
		framing = r.Format[len("syslog.5424."):]
	default:
		return dst, &errRequestFormat{r.Format}
	}
	ends, err := parseEnds(nil, r)
	if err != nil {
		return dst, err
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	start := 0
	for _, end := range ends {
		msg := r.Body[start:end]
		start = end
		switch framing {
		case "octet":
			sp := bytes.IndexByte(msg, ' ')
			if sp < 0 {
				return dst, errSyslogIndex
			}
			if n, err := strconv.Atoi(string(msg[:sp])); err != nil || n != len(msg)-sp-1 {
				return dst, errSyslogIndex
			}
			msg = msg[sp+1:]
		case "lf":
			msg = bytes.TrimSuffix(msg, []byte("\n"))
		}
		var e relaykit.Event
		e.ReceiveTime = r.OldestReceive
		p.Parse(&e, msg)
		dst = append(dst, e)
	}
	return dst, nil
}
