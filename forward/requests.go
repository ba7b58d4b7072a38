package forward

// Requests encoded ahead (relaykit.RequestSink), shared by the HTTP sinks.
//
// EncodeRequests packs a batch exactly as Send does (same split at
// MaxRequestBytes, same time span rule, same refusals), seals each request
// (suffix, gzip) into the caller's relaykit.Request, and records where each
// event's encoding ends in Index:
//
//	index = version:byte(1) rawLen:uvarint events:uvarint (len:uvarint)*events
//
// rawLen is the uncompressed body's length, prefix and suffix included;
// each len is one event's encoding, between the separators. SendRequests
// sends a stored body as it is (the request's spans come from Index, its
// raw body stays compressed until a protocol step - a 413 split, the rest
// after a partial accept - needs it). CutRequest and DecodeRequest
// decompress the body and slice it at the spans.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/gzipool"
)

// gzipSuffix ends the Format of a gzipped body.
const gzipSuffix = "+gzip"

const indexVersion = 1

// splitFormat returns the family of a Request's Format and whether its body
// is gzipped.
func splitFormat(format string) (family string, gzip bool) {
	family, gzip = strings.CutSuffix(format, gzipSuffix)
	return family, gzip
}

// framing is how a body joins the encodings of its events.
type framing struct{ prefix, separator, suffix []byte }

// framingOf returns the framing of a family of this package.
func framingOf(family string) (framing, bool) {
	switch {
	case strings.HasPrefix(family, "sentinel."):
		return framing{[]byte("["), []byte(","), []byte("]")}, true
	case family == hecEventFormat:
		return framing{}, true
	case family == hecRawFormat:
		return framing{nil, []byte("\n"), []byte("\n")}, true
	}
	return framing{}, false
}

// errRequestFormat is the error of a request this package cannot read.
type errRequestFormat struct{ format string }

func (e *errRequestFormat) Error() string {
	return fmt.Sprintf("request of format %q: not a format of this destination", e.format)
}

var errIndex = errors.New("request body does not match its index")

// requestFormat returns the Format of the requests s encodes now.
func (s *sender) requestFormat() string {
	if s.cfg.DisableGzip {
		return s.p.format
	}
	return s.formatGzip
}

// encodeRequests is RequestSink.EncodeRequests for every HTTP sink.
func (s *sender) encodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	if len(batch) == 0 {
		return dst, nil
	}
	st := &batchState{s: s, batch: batch}
	s.pack(context.Background(), st, func(r *request) error {
		dst = s.emit(st, dst, r)
		return nil
	})
	if len(st.failed) > 0 {
		return dst, st.batchErr()
	}
	return dst, nil
}

// emit seals r into a new element of dst (reusing its buffers) and returns
// dst; r goes back to the pool. A request whose compressed body exceeds
// protocol.maxWire is split in two first.
func (s *sender) emit(st *batchState, dst []relaykit.Request, r *request) []relaykit.Request {
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, relaykit.Request{})
	}
	q := &dst[len(dst)-1]
	q.Index = appendIndex(q.Index[:0], r, len(s.p.separator), len(s.p.prefix)+len(s.p.suffix))
	r.raw = append(r.raw, s.p.suffix...)
	if r.gzip {
		// The level is validated by withDefaults, so AppendGzip cannot fail.
		q.Body, _ = AppendGzip(q.Body[:0], r.raw, s.cfg.GzipLevel)
		if s.p.maxWire > 0 && len(q.Body) > s.p.maxWire && len(r.spans) > 1 {
			// Data that hardly compresses: halve until each fits.
			dst = dst[:len(dst)-1]
			r.raw = r.raw[:len(r.raw)-len(s.p.suffix)]
			half := len(r.spans) / 2
			a, b := s.rebuild(st, r, 0, half), s.rebuild(st, r, half, len(r.spans))
			s.putRequest(r)
			s.c.splits.Add(1)
			for _, h := range []*request{a, b} {
				if len(h.spans) == 0 {
					s.putRequest(h)
					continue
				}
				h.recomputeTimes(st, s)
				dst = s.emit(st, dst, h)
			}
			return dst
		}
	} else {
		q.Body, r.raw = r.raw, q.Body[:0] // hand the body over, keep the other buffer
	}
	q.Format = s.requestFormat()
	q.Events = len(r.spans)
	q.OldestReceive, q.NewestReceive = r.rmin, r.rmax
	s.putRequest(r)
	return dst
}

// recomputeTimes sets r's receive times from its events (a half of a
// request split in emit).
func (r *request) recomputeTimes(st *batchState, s *sender) {
	r.rmin, r.rmax = 0, 0
	for _, i := range r.idx {
		if rt := st.event(int(i)).ReceiveTime; rt != 0 {
			if r.rmin == 0 || rt < r.rmin {
				r.rmin = rt
			}
			r.rmax = max(r.rmax, rt)
		}
	}
}

// appendIndex appends the index of r (unsealed) to dst; sep is the
// separator's length and frame the prefix's and suffix's together.
func appendIndex(dst []byte, r *request, sep, frame int) []byte {
	n := len(r.spans)
	rawLen := frame
	for _, sp := range r.spans {
		rawLen += sp.end - sp.start
	}
	if n > 1 {
		rawLen += (n - 1) * sep
	}
	dst = append(dst, indexVersion)
	dst = binary.AppendUvarint(dst, uint64(rawLen))
	dst = binary.AppendUvarint(dst, uint64(n))
	for _, sp := range r.spans {
		dst = binary.AppendUvarint(dst, uint64(sp.end-sp.start))
	}
	return dst
}

// parseIndex appends the spans of the events of a body framed by fr to
// spans, from index, and returns them with the raw body's length. It checks
// that they add up to that length.
func parseIndex(spans []span, index []byte, fr framing, events int) ([]span, int, error) {
	if len(index) == 0 || index[0] != indexVersion {
		return spans, 0, errIndex
	}
	p := index[1:]
	next := func() (int, bool) {
		v, k := binary.Uvarint(p)
		if k <= 0 || v > 1<<31 {
			return 0, false
		}
		p = p[k:]
		return int(v), true
	}
	rawLen, ok1 := next()
	n, ok2 := next()
	if !ok1 || !ok2 || n != events || n > len(p) {
		return spans, 0, errIndex
	}
	pos := len(fr.prefix)
	for i := range n {
		l, ok := next()
		if !ok {
			return spans, 0, errIndex
		}
		if i > 0 {
			pos += len(fr.separator)
		}
		spans = append(spans, span{pos, pos + l})
		pos += l
	}
	if pos+len(fr.suffix) != rawLen || len(p) != 0 {
		return spans, 0, errIndex
	}
	return spans, rawLen, nil
}

// maxRawBody bounds the decompressed body of a stored request.
const maxRawBody = 64 << 20

// openBody returns the uncompressed body of rq (appended to buf) and the
// spans of its events (appended to spans), for a family framed by fr.
func openBody(buf []byte, spans []span, rq *relaykit.Request, fr framing, gz bool) ([]byte, []span, error) {
	spans, rawLen, err := parseIndex(spans, rq.Index, fr, rq.Events)
	if err != nil {
		return buf, spans, err
	}
	start := len(buf)
	if gz {
		buf, err = gzipool.Decompress(buf, rq.Body, min(rawLen, maxRawBody))
		if err != nil {
			return buf, spans, fmt.Errorf("request body: %w", err)
		}
	} else {
		buf = append(buf, rq.Body...)
	}
	raw := buf[start:]
	if len(raw) != rawLen || !bytes.HasPrefix(raw, fr.prefix) || !bytes.HasSuffix(raw, fr.suffix) {
		return buf, spans, errIndex
	}
	return buf, spans, nil
}

// openRequest returns a pooled request that sends rq's stored body, its
// events numbered from off in the batch state.
func (s *sender) openRequest(rq *relaykit.Request, off int, gz bool) (*request, error) {
	r := s.getRequest()
	var err error
	fr := framing{s.p.prefix, s.p.separator, s.p.suffix}
	r.spans, _, err = parseIndex(r.spans, rq.Index, fr, rq.Events)
	if err != nil || rq.Events == 0 {
		s.putRequest(r)
		if err == nil {
			err = errIndex
		}
		return nil, err
	}
	for i := range rq.Events {
		r.idx = append(r.idx, int32(off+i))
	}
	r.stored, r.gzip = rq.Body, gz
	r.rmin, r.rmax = rq.OldestReceive, rq.NewestReceive
	return r, nil
}

// open decompresses the stored body of r into r.raw (without its suffix),
// so that a protocol step can rebuild it; r is then like a request built
// here.
func (s *sender) open(r *request) error {
	raw := r.raw[:0]
	var err error
	if r.gzip {
		raw, err = gzipool.Decompress(raw, r.stored, maxRawBody)
		if err != nil {
			return fmt.Errorf("request body: %w", err)
		}
	} else {
		raw = append(raw, r.stored...)
	}
	last := r.spans[len(r.spans)-1]
	if len(raw) != last.end+len(s.p.suffix) || !bytes.HasPrefix(raw, s.p.prefix) {
		return errIndex
	}
	r.raw = raw[:last.end]
	r.stored = nil
	return nil
}

// sendRequests is RequestSink.SendRequests for every HTTP sink.
func (s *sender) sendRequests(ctx context.Context, reqs []relaykit.Request) error {
	total := 0
	for i := range reqs {
		total += reqs[i].Events
	}
	if total == 0 {
		return ctx.Err()
	}
	st := &batchState{s: s, reqs: reqs}
	off := 0
	for i := range reqs {
		rq := &reqs[i]
		n := rq.Events
		if n == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			s.failRange(st, off, total, relaykit.ReasonShutdown, err)
			break
		}
		family, gz := splitFormat(rq.Format)
		if family != s.p.format {
			s.sendForeign(ctx, st, rq, off)
			off += n
			continue
		}
		r, err := s.openRequest(rq, off, gz)
		if err != nil {
			s.failRange(st, off, off+n, relaykit.ReasonRejected, &SendError{Destination: s.dest, Code: -1, Err: err})
			off += n
			continue
		}
		if err := s.dispatch(ctx, st, r); err != nil {
			s.failRange(st, off, total, relaykit.ReasonShutdown, err)
			s.putRequest(r)
			break
		}
		off += n
	}
	return s.finish(ctx, st)
}

// sendForeign sends the events of rq, a request of another format (the
// destination's configuration changed since it was encoded), decoded and
// encoded again; a format it cannot decode fails permanently.
func (s *sender) sendForeign(ctx context.Context, st *batchState, rq *relaykit.Request, off int) {
	evs, err := s.decodeRequest(nil, rq)
	if err == nil && len(evs) != rq.Events {
		err = errIndex
	}
	if err != nil {
		s.failRange(st, off, off+rq.Events, relaykit.ReasonRejected, &SendError{Destination: s.dest, Code: -1, Err: err})
		return
	}
	err = s.send(ctx, evs)
	if err == nil {
		return
	}
	be := relaykit.AsBatchError(err, len(evs))
	st.mu.Lock()
	for _, f := range be.Failed {
		f.From += off
		f.To += off
		st.failed = append(st.failed, f)
	}
	st.mu.Unlock()
}

// cutRequest is RequestSink.CutRequest for every HTTP sink.
func (s *sender) cutRequest(rq *relaykit.Request, from, to int) (relaykit.Request, error) {
	if from < 0 || to > rq.Events || from >= to {
		return relaykit.Request{}, fmt.Errorf("forward: cut [%d, %d) of a request of %d events", from, to, rq.Events)
	}
	family, gz := splitFormat(rq.Format)
	fr, ok := framingOf(family)
	if !ok {
		return relaykit.Request{}, &errRequestFormat{rq.Format}
	}
	raw, spans, err := openBody(nil, nil, rq, fr, gz)
	if err != nil {
		return relaykit.Request{}, err
	}
	r := &request{raw: append([]byte(nil), fr.prefix...)}
	for j := from; j < to; j++ {
		if j > from {
			r.raw = append(r.raw, fr.separator...)
		}
		start := len(r.raw)
		r.raw = append(r.raw, raw[spans[j].start:spans[j].end]...)
		r.spans = append(r.spans, span{start, len(r.raw)})
	}
	out := relaykit.Request{
		Format: rq.Format, Events: to - from,
		OldestReceive: rq.OldestReceive, NewestReceive: rq.NewestReceive,
		Index: appendIndex(nil, r, len(fr.separator), len(fr.prefix)+len(fr.suffix)),
	}
	r.raw = append(r.raw, fr.suffix...)
	if gz {
		out.Body, _ = AppendGzip(nil, r.raw, s.cfg.GzipLevel)
	} else {
		out.Body = r.raw
	}
	return out, nil
}

// decodeRequest is RequestSink.DecodeRequest for every HTTP sink.
func (s *sender) decodeRequest(dst []relaykit.Event, rq *relaykit.Request) ([]relaykit.Event, error) {
	family, gz := splitFormat(rq.Format)
	fr, ok := framingOf(family)
	if !ok {
		return dst, &errRequestFormat{rq.Format}
	}
	raw, spans, err := openBody(nil, nil, rq, fr, gz)
	if err != nil {
		return dst, err
	}
	n := len(dst)
	for _, sp := range spans {
		var ok bool
		if s.p.decode != nil {
			dst, ok, err = s.p.decode(dst, family, raw[sp.start:sp.end])
		}
		if !ok && err == nil {
			dst, err = decodeAny(dst, family, raw[sp.start:sp.end])
		}
		if err != nil {
			return dst[:n], fmt.Errorf("request of format %q: event %d: %w", rq.Format, len(dst)-n, err)
		}
	}
	return dst, nil
}

// decodeAny decodes one event of a family of this package with the
// defaults of its sink.
func decodeAny(dst []relaykit.Event, family string, enc []byte) ([]relaykit.Event, error) {
	switch {
	case strings.HasPrefix(family, "sentinel."):
		return decodeSentinelRow(dst, enc, defaultSentinelNames)
	case family == hecEventFormat:
		return decodeHECEvent(dst, enc, "")
	case family == hecRawFormat:
		return append(dst, relaykit.Event{Raw: append([]byte(nil), enc...)}), nil
	}
	return dst, &errRequestFormat{family}
}
