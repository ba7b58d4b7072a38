package hec

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/relaykit/relaykit/internal/limitread"

	"github.com/klauspost/compress/gzip"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/hecwire"
	"github.com/relaykit/relaykit/internal/syslogname"
)

const (
	endpointEvent = "event"
	endpointRaw   = "raw"
)

// reqState is what one request needs, pooled: body buffers, the gzip
// reader, the decoder, the batch and the response buffer. With indexer
// acknowledgement it travels with the batch to the background Send.
type reqState struct {
	body, plain []byte
	zr          *gzip.Reader
	br          bytes.Reader
	dec         hecwire.Decoder
	batch       []relaykit.Event
	out         []byte
	req         Request
}

// maxPooledBytes bounds the memory a pooled request state keeps: a state
// that grew past it (one huge request) is left to the collector. The
// state holds the body as received, decompressed, copied by the scanner,
// and the events' buffers: about three times cap(body)+cap(plain).
const maxPooledBytes = 16 << 20

func (h *Handler) get() *reqState {
	if st, ok := h.pool.Get().(*reqState); ok {
		return st
	}
	return new(reqState)
}

func (h *Handler) put(st *reqState) {
	if 3*(cap(st.body)+cap(st.plain)) > maxPooledBytes {
		return
	}
	st.req = Request{}
	h.pool.Put(st)
}

// serveData serves the event and raw endpoints.
func (h *Handler) serveData(w http.ResponseWriter, r *http.Request, endpoint string) {
	start := time.Now()
	st := h.get()
	handedOff := false
	defer func() {
		if !handedOff {
			h.put(st)
		}
	}()
	code, events, wire := h.data(w, r, st, endpoint, &handedOff)
	if f := h.cfg.Hooks.OnRequest; f != nil {
		// st may belong to a background Send by now: the token's name
		// comes from the request again.
		name := ""
		if tok, c := h.auth(r); c == CodeSuccess {
			name = tok.Name
		}
		f(name, endpoint, code, events, wire, time.Since(start))
	}
}

// data does the work of serveData and returns what OnRequest reports.
func (h *Handler) data(w http.ResponseWriter, r *http.Request, st *reqState, endpoint string, handedOff *bool) (code, events, wire int) {
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = []string{http.MethodPost}
		replyStatus(w, http.StatusMethodNotAllowed, []byte("Method Not Allowed"))
		return -1, 0, 0
	}
	tok, code := h.auth(r)
	if code != CodeSuccess {
		h.reply(w, st, code, nil)
		return code, 0, 0
	}
	st.req = Request{Token: tok.Name, Route: tok.Route, Endpoint: endpoint, RemoteAddr: r.RemoteAddr}
	ch, code := channel(r, tok.Ack || endpoint == endpointRaw)
	if code != CodeSuccess {
		h.reply(w, st, code, nil)
		return code, 0, 0
	}
	st.req.Channel = ch
	h.requests.Add(1)
	if h.isClosed() {
		h.reply(w, st, CodeServerBusy, nil)
		return CodeServerBusy, 0, 0
	}
	body, wire, status := h.readBody(w, r, st)
	if status != 0 {
		return -1, 0, wire
	}
	now := h.cfg.Clock.Nano()
	var bad, n int
	if endpoint == endpointRaw {
		bad = h.decodeRaw(r, st, tok, body, now)
	} else {
		bad, n = h.decodeEvents(st, tok, body, now)
	}
	batch := st.batch
	h.events.Add(int64(len(batch)))
	if bad != CodeSuccess {
		// HEC indexes the events before the bad one and says which one it
		// refused: hand those over first, or answer busy so that the
		// sender sends the whole request again.
		if len(batch) > 0 && h.send(r.Context(), st, batch) != nil {
			h.reply(w, st, CodeServerBusy, nil)
			return CodeServerBusy, len(batch), wire
		}
		var extra []byte
		if bad != CodeNoData && endpoint == endpointEvent {
			extra = strconv.AppendInt(append(st.out[:0:0], `,"invalid-event-number":`...), int64(n), 10)
		}
		h.reply(w, st, bad, extra)
		return bad, len(batch), wire
	}
	if tok.Ack {
		code = h.sendAcked(w, r, st, ch, handedOff)
		return code, len(batch), wire
	}
	if h.send(r.Context(), st, batch) != nil {
		h.reply(w, st, CodeServerBusy, nil)
		return CodeServerBusy, len(batch), wire
	}
	h.reply(w, st, CodeSuccess, nil)
	return CodeSuccess, len(batch), wire
}

// readBody reads the request body within MaxBodyBytes and BodyTimeout and
// decompresses it. A non-zero status means it answered the request.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, st *reqState) (body []byte, wire, status int) {
	var rc *http.ResponseController
	if h.cfg.BodyTimeout > 0 {
		rc = http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(h.cfg.BodyTimeout)) != nil {
			rc = nil
		}
	}
	limit := h.cfg.MaxBodyBytes
	var err error
	st.body, err = limitread.Append(st.body[:0], r.Body, limit)
	wire = len(st.body)
	h.bytes.Add(int64(wire))
	if err != nil {
		// The rest of the body is not wanted: close the connection after
		// the answer rather than let net/http read it (the deadline stays
		// in force meanwhile).
		w.Header()["Connection"] = closeConn
	} else if rc != nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	switch {
	case errors.Is(err, limitread.ErrTooLarge):
		h.tooLarge.Add(1)
		tooLarge(w, st, int64(wire), limit)
		return nil, wire, http.StatusRequestEntityTooLarge
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			h.bodyTimeouts.Add(1)
			replyStatus(w, http.StatusRequestTimeout, []byte("Request body not received within the time limit"))
			return nil, wire, http.StatusRequestTimeout
		}
		h.bodyErrors.Add(1)
		replyStatus(w, http.StatusBadRequest, []byte("Request body could not be read"))
		return nil, wire, http.StatusBadRequest
	}
	body = st.body
	switch enc := r.Header["Content-Encoding"]; {
	case len(enc) == 0 || enc[0] == "" || strings.EqualFold(enc[0], "identity"):
	case strings.EqualFold(enc[0], "gzip"):
		st.br.Reset(st.body)
		if st.zr == nil {
			st.zr, err = gzip.NewReader(&st.br)
		} else {
			err = st.zr.Reset(&st.br)
		}
		if err == nil {
			st.plain, err = limitread.Append(st.plain[:0], st.zr, limit)
		}
		switch {
		case errors.Is(err, limitread.ErrTooLarge):
			// A gzip bomb, or just too much: cut at the limit.
			h.tooLarge.Add(1)
			tooLarge(w, st, int64(len(st.plain)), limit)
			return nil, wire, http.StatusRequestEntityTooLarge
		case err != nil:
			h.badEncoding.Add(1)
			h.reply(w, st, CodeInvalidDataFormat, nil)
			return nil, wire, http.StatusBadRequest
		}
		body = st.plain
	default:
		h.badEncoding.Add(1)
		replyStatus(w, http.StatusUnsupportedMediaType, []byte("Unsupported Content-Encoding"))
		return nil, wire, http.StatusUnsupportedMediaType
	}
	h.decoded.Add(int64(len(body)))
	return body, wire, 0
}

var (
	closeConn = []string{"close"}
)

// tooLarge answers 413 with Splunk's text.
func tooLarge(w http.ResponseWriter, st *reqState, n, limit int64) {
	b := append(st.out[:0], "Content-Length of "...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, " too large (maximum is "...)
	b = strconv.AppendInt(b, limit, 10)
	st.out = append(b, ')')
	replyStatus(w, http.StatusRequestEntityTooLarge, st.out)
}

// next returns the next event of the batch, reset, reusing its buffers.
func (st *reqState) next(now int64) *relaykit.Event {
	var e *relaykit.Event
	st.batch, e = extend(st.batch)
	e.Reset()
	e.ReceiveTime = now
	return e
}

// decodeEvents decodes the event endpoint's body into st.batch. It
// returns CodeSuccess, or the code of the first bad event and its number.
func (h *Handler) decodeEvents(st *reqState, tok *token, body []byte, now int64) (int, int) {
	st.batch = st.batch[:0]
	st.dec.Reset(body)
	for {
		ev, code := st.dec.Next()
		if code != CodeSuccess {
			return code, st.dec.Number()
		}
		if ev == nil {
			return CodeSuccess, 0
		}
		if !tok.allowed(ev.Index) {
			return CodeIncorrectIndex, st.dec.Number()
		}
		e := st.next(now)
		if ev.Time != nil {
			e.Time = ev.Nanos
		}
		e.Host = appendOr(e.Host, ev.Host, tok.host)
		e.Source = appendOr(e.Source, ev.Source, tok.source)
		e.SourceType = appendOr(e.SourceType, ev.SourceType, tok.sourceType)
		e.Index = appendOr(e.Index, ev.Index, tok.index)
		e.Raw = append(e.Raw, ev.Event...)
		for i := range ev.Fields {
			addField(e, ev.Fields[i].Key, ev.Fields[i].Value)
		}
		h.finish(e, tok)
	}
}

// decodeRaw splits the raw endpoint's body into one event per line, with
// the metadata of the query string. It returns CodeSuccess or the code to
// answer.
func (h *Handler) decodeRaw(r *http.Request, st *reqState, tok *token, body []byte, now int64) int {
	st.batch = st.batch[:0]
	q := r.URL.RawQuery
	host, source, sourceType, index := queryValue(q, "host"), queryValue(q, "source"), queryValue(q, "sourcetype"), queryValue(q, "index")
	if !tok.allowed([]byte(index)) {
		return CodeIncorrectIndex
	}
	var ts int64
	if t := queryValue(q, "time"); t != "" {
		var ok bool
		if ts, ok = hecwire.ParseTime([]byte(t)); !ok {
			return CodeInvalidDataFormat
		}
	}
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e := st.next(now)
		e.Time = ts
		e.Host = appendOrString(e.Host, host, tok.host)
		e.Source = appendOrString(e.Source, source, tok.source)
		e.SourceType = appendOrString(e.SourceType, sourceType, tok.sourceType)
		e.Index = appendOrString(e.Index, index, tok.index)
		e.Raw = append(e.Raw, line...)
		h.finish(e, tok)
	}
	if len(st.batch) == 0 {
		return CodeNoData
	}
	return CodeSuccess
}

// finish sets the route field and the priority of a decoded event.
func (h *Handler) finish(e *relaykit.Event, tok *token) {
	if !h.cfg.KeepPriorityFields {
		decodePriority(e)
	}
	if tok.route != nil && h.cfg.RouteField != "" {
		e.SetField(h.cfg.RouteField, tok.route)
	}
}

// decodePriority turns the fields "facility" and "severity", when both
// hold syslog names, into the event's priority and removes them.
func decodePriority(e *relaykit.Event) {
	fi, si := -1, -1
	for i := range e.Fields {
		switch string(e.Fields[i].Key) {
		case "facility":
			fi = i
		case "severity":
			si = i
		}
	}
	if fi < 0 || si < 0 {
		return
	}
	f, ok1 := syslogname.FacilityCode(e.Fields[fi].Value)
	s, ok2 := syslogname.SeverityCode(e.Fields[si].Value)
	if !ok1 || !ok2 {
		return
	}
	e.SetPriority(f, s)
	e.DeleteField("facility")
	e.DeleteField("severity")
}

func (t *token) allowed(index []byte) bool {
	if t.indexes == nil || len(index) == 0 {
		return true
	}
	_, ok := t.indexes[string(index)]
	return ok
}

func appendOr(dst, v, def []byte) []byte {
	if len(v) > 0 {
		return append(dst, v...)
	}
	return append(dst, def...)
}

func appendOrString(dst []byte, v string, def []byte) []byte {
	if v != "" {
		return append(dst, v...)
	}
	return append(dst, def...)
}

// addField appends a field, reusing the spare capacity Reset left; keys
// may repeat (multi-value fields).
func addField(e *relaykit.Event, k, v []byte) {
	var f *relaykit.Field
	e.Fields, f = extend(e.Fields)
	f.Key = append(f.Key[:0], k...)
	f.Value = append(f.Value[:0], v...)
}

// extend lengthens s by one element, reusing spare capacity (whose
// element keeps its buffers), and returns it with that element.
func extend[T any](s []T) ([]T, *T) {
	n := len(s)
	if n < cap(s) {
		s = s[:n+1]
	} else {
		var zero T
		s = append(s, zero)
	}
	return s, &s[n]
}
