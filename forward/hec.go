package forward

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/jsonenc"
	"github.com/relaykit/relaykit/internal/syslogname"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// HECEndpoint selects the HEC input endpoint.
type HECEndpoint uint8

const (
	// HECEvent posts JSON event objects to /services/collector/event, with
	// metadata per event. The default.
	HECEvent HECEndpoint = iota
	// HECRaw posts raw messages, one per line, to /services/collector/raw.
	// Metadata (host, source, sourcetype, index) is per request, from the
	// HECConfig defaults, sent as query parameters; the events' own
	// metadata, times and fields are not sent, and Splunk's line breaking
	// splits a message that contains newlines.
	HECRaw
)

// HEC defaults and limits.
const (
	// DefaultHECMaxEventBytes is HEC's default maxEventSize (limits.conf
	// [http_input] max_content_length is separate): 5 MiB.
	DefaultHECMaxEventBytes = 5 << 20
	// DefaultHECMaxRequestBytes is the default cap of one request body
	// before compression: 1 MiB.
	DefaultHECMaxRequestBytes = 1 << 20
)

// HECConfig configures an [HEC] sink. The zero value is not valid: URL and
// Token are required. Every other zero field means the documented default.
type HECConfig struct {
	// URL is the HEC base URL, scheme, host and port, e.g.
	// "https://splunk.example.com:8088". A path, if any, is kept as a
	// prefix of /services/collector/...
	URL string
	// Token is the HEC token, sent as "Authorization: Splunk <token>". It
	// never appears in errors, logs or Stats.
	Token string
	// Endpoint selects /services/collector/event (zero) or /raw.
	Endpoint HECEndpoint

	// Host, Source, SourceType and Index are the values sent when the
	// event's own field is empty (or always, with OverrideEventMeta).
	// Empty means the event's value is sent, or, if that is empty too, the
	// field is omitted and HEC applies the token's defaults.
	Host, Source, SourceType, Index string
	// OverrideEventMeta makes each of Host, Source, SourceType and Index
	// that is set replace the event's own value instead of filling it only
	// when empty: the destination's setting wins over what inputs and
	// pipelines stamped on the event (such as sourcetype "syslog"). Those
	// left empty still send the event's value. The raw endpoint always
	// sends these settings (as query parameters) and never the event's.
	OverrideEventMeta bool

	// EventObject sends "event" as a JSON object, {MessageKey: Raw, field:
	// value, ...}, with the event's fields inside it, instead of a string
	// holding Raw with the fields as indexed "fields".
	EventObject bool
	// MessageKey is the key of Raw in the event object. Zero means
	// "message". Only with EventObject.
	MessageKey string
	// OmitFields sends no fields at all.
	OmitFields bool
	// Fields selects the event fields sent (as indexed "fields", or
	// inside the event object with EventObject), by key; a key ending in
	// '*' selects every field with that prefix ("sd.*", "cef.*"). The
	// syslog facility and severity of an event with a priority are sent
	// as the fields "facility" and "severity", by name (kern ... local7;
	// emerg, alert, crit, err, warning, notice, info, debug: RFC 5424
	// tables 1 and 2 as syslog.conf spells them), unless the event has
	// fields of those names; list them to select them. Nil means every
	// field, facility and severity included; an empty non-nil list means
	// none, as OmitFields does.
	Fields []string

	// Ack enables indexer acknowledgement (the token must have useACK
	// enabled): every request is confirmed through
	// /services/collector/ack, and the events of a request not
	// acknowledged within AckTimeout are reported undelivered
	// (retryable). Delivery behind a retrying queue is then at least once:
	// an event whose acknowledgement was lost, or came after AckTimeout,
	// is indexed twice.
	Ack bool
	// AckTimeout is how long a request may stay unacknowledged before its
	// events are reported undelivered. Zero means 2 minutes. A caller
	// that bounds Send (delivery.Config.AttemptTimeout) must allow for it.
	AckTimeout time.Duration
	// AckPollInterval is the time between acknowledgement polls. Zero
	// means 1 s.
	AckPollInterval time.Duration
	// Channel is the X-Splunk-Request-Channel GUID sent on every request.
	// Zero means a random GUID per sink.
	Channel string

	// DisableHealthCheck skips GET /services/collector/health before the
	// first request and before the next one after a retryable failure. By
	// default a failed health check fails the request (retryable, with the
	// health response's Retry-After) without sending its data, so an
	// unhealthy HEC gets no data until it reports healthy.
	DisableHealthCheck bool

	// HTTP holds client, TLS, timeouts, limits, compression and hooks.
	// MaxRequestBytes defaults to [DefaultHECMaxRequestBytes] and
	// MaxEventBytes to [DefaultHECMaxEventBytes] (capped at
	// MaxRequestBytes).
	HTTP HTTPConfig
}

// HEC is a [relaykit.Sink] that sends events to a Splunk HTTP Event
// Collector. It is safe for concurrent use by multiple goroutines.
//
// Send makes one attempt per request and reports every event it did not
// deliver in a [*relaykit.BatchError]; it does not retry. Put it behind a
// delivery.Queue to retry. Response codes are classified as HEC documents
// them: 0 success; 9 (server busy), 8 (internal error) and 18-20
// (unhealthy) retryable, with the response's Retry-After as the
// FailedRange's RetryAfter; 5, 6, 12, 13, 15 (bad data): the events before
// invalid-event-number were accepted, that event fails permanently with
// [relaykit.ReasonRejected] and the rest are sent on in a new request (they
// were never processed; without invalid-event-number the whole request is
// rejected); 1-4 and 16 (token errors) fail permanently with
// [relaykit.ReasonUnauthorized] and are logged once until a request
// succeeds; 7 (incorrect index): the index is remembered (up to 1024 of
// them) and every event for it is rejected without sending. For code 7
// some Splunk versions have been reported to number the bad event one
// higher than documented; where the request cannot tell the two readings
// apart, the event before the reported number is reported rejected without
// blaming its index and the rest is sent on, so an event may be both
// indexed and reported, but none is lost.
type HEC struct {
	cfg     HECConfig
	s       *sender
	auth    string
	ackURL  string
	health  string
	channel string

	host, source, sourceType, index []byte // JSON-encoded defaults, or nil
	messageKey                      []byte // JSON-encoded
	defIndex                        []byte // cfg.Index
	fieldSel                        []fieldPattern
	allFields, priority             bool // every field; facility and severity

	badMu      sync.RWMutex
	badIndexes map[string]struct{}
	nBad       atomic.Int32
}

var _ relaykit.RequestSink = (*HEC)(nil)

// Formats of the requests an HEC sink encodes (relaykit.Request.Format,
// without "+gzip").
const (
	hecEventFormat = "hec.event"
	hecRawFormat   = "hec.raw"
)

// maxBadIndexes bounds the remembered incorrect indexes.
const maxBadIndexes = 1024

// NewHEC returns an HEC sink for cfg, or a *relaykit.FieldError wrapping
// [ErrInvalidConfig].
func NewHEC(cfg HECConfig) (*HEC, error) {
	if cfg.HTTP.Name == "" {
		cfg.HTTP.Name = "hec"
	}
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	u, err := url.Parse(cfg.URL)
	switch {
	case cfg.URL == "":
		return nil, bad("URL", "required")
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, bad("URL", "must be http(s)://host[:port]")
	case u.User != nil, u.RawQuery != "":
		return nil, bad("URL", "must not hold credentials or a query")
	case cfg.Token == "":
		return nil, bad("Token", "required")
	case strings.ContainsAny(cfg.Token, "\r\n"):
		return nil, bad("Token", "contains a line break")
	case cfg.Endpoint > HECRaw:
		return nil, bad("Endpoint", "unknown endpoint %d", cfg.Endpoint)
	case cfg.AckTimeout < 0:
		return nil, bad("AckTimeout", "must not be negative")
	case cfg.AckPollInterval < 0:
		return nil, bad("AckPollInterval", "must not be negative")
	case cfg.MessageKey != "" && !cfg.EventObject:
		return nil, bad("MessageKey", "needs EventObject")
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = 2 * time.Minute
	}
	if cfg.AckPollInterval == 0 {
		cfg.AckPollInterval = time.Second
	}
	if cfg.MessageKey == "" {
		cfg.MessageKey = "message"
	}
	if cfg.Channel == "" {
		cfg.Channel = newGUID()
	} else if strings.ContainsAny(cfg.Channel, "\r\n") {
		return nil, bad("Channel", "contains a line break")
	}
	base := strings.TrimRight(u.String(), "/")
	h := &HEC{
		cfg:        cfg,
		auth:       "Splunk " + cfg.Token,
		ackURL:     base + "/services/collector/ack",
		health:     base + "/services/collector/health",
		channel:    cfg.Channel,
		host:       jsonOrNil(cfg.Host),
		source:     jsonOrNil(cfg.Source),
		sourceType: jsonOrNil(cfg.SourceType),
		index:      jsonOrNil(cfg.Index),
		messageKey: jsonenc.AppendString(nil, []byte(cfg.MessageKey)),
		defIndex:   []byte(cfg.Index),
		badIndexes: make(map[string]struct{}),
		allFields:  cfg.Fields == nil && !cfg.OmitFields,
		priority:   cfg.Fields == nil && !cfg.OmitFields,
	}
	if !cfg.OmitFields {
		for _, f := range cfg.Fields {
			p, wild := strings.CutSuffix(f, "*")
			switch {
			case f == "":
				return nil, bad("Fields", "has an empty key")
			case f == "facility", f == "severity":
				h.priority = true
			}
			h.fieldSel = append(h.fieldSel, fieldPattern{key: p, prefix: wild})
		}
	}
	p := protocol{
		contentType: "application/json",
		prepare:     h.prepare,
		classify:    h.classify,
		reject:      h.reject,
	}
	if cfg.Endpoint == HECRaw {
		q := url.Values{}
		for k, v := range map[string]string{"host": cfg.Host, "source": cfg.Source, "sourcetype": cfg.SourceType, "index": cfg.Index} {
			if v != "" {
				q.Set(k, v)
			}
		}
		p.url = base + "/services/collector/raw"
		if len(q) > 0 {
			p.url += "?" + q.Encode()
		}
		p.contentType = "text/plain"
		p.encode = h.encodeRaw
		p.separator, p.suffix = []byte("\n"), []byte("\n")
		p.format = hecRawFormat
	} else {
		p.url = base + "/services/collector/event"
		p.encode = h.encodeEvent
		p.format = hecEventFormat
	}
	p.rejecting = func() bool { return h.nBad.Load() > 0 }
	p.decode = h.decodeEvent
	if cfg.Ack {
		p.confirm = h.confirm
	}
	if !cfg.DisableHealthCheck {
		p.health = h.checkHealth
	}
	h.s, err = newSender("hec", cfg.HTTP, p, DefaultHECMaxRequestBytes, DefaultHECMaxEventBytes)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Send delivers batch to HEC with one attempt per request. It returns nil
// when every event was delivered (acknowledged, with Ack), else a
// [*relaykit.BatchError] listing the undelivered events: permanent
// (rejected, too large, unauthorized) or retryable, with the RetryAfter
// HEC asked for; wrapped with ctx.Err() when ctx ended first. It reads
// batch only until it returns.
func (h *HEC) Send(ctx context.Context, batch []relaykit.Event) error {
	return h.s.send(ctx, batch)
}

// EncodeRequests appends to dst the requests that carry batch, as Send
// would send them (split at MaxRequestBytes), gzipped unless DisableGzip,
// for a queue to store and send later with [HEC.SendRequests]; see
// [relaykit.RequestSink]. Events HEC would refuse (an empty message, an
// index it refused, an event over MaxEventBytes) are listed in the
// returned *relaykit.BatchError; the requests carry the others. Their
// Format is "hec.event" or "hec.raw", with "+gzip" when compressed. It
// allocates nothing once dst's buffers are warm.
func (h *HEC) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	return h.s.encodeRequests(dst, batch)
}

// SendRequests sends requests made by EncodeRequests, their stored bodies
// as they are, one attempt each, and reports what was not delivered as
// Send does (event positions counting through reqs); see
// [relaykit.RequestSink]. A request for the other endpoint (event or raw)
// is decoded and sent as this sink's events.
func (h *HEC) SendRequests(ctx context.Context, reqs []relaykit.Request) error {
	return h.s.sendRequests(ctx, reqs)
}

// CutRequest returns a request of the events [from, to) of r, the same
// bytes, compressed again; see [relaykit.RequestSink].
func (h *HEC) CutRequest(r *relaykit.Request, from, to int) (relaykit.Request, error) {
	return h.s.cutRequest(r, from, to)
}

// DecodeRequest appends the events of r to dst: time, host, source,
// sourcetype, index, the message as Raw and the fields (of an event object,
// its other members); see [relaykit.RequestSink].
func (h *HEC) DecodeRequest(dst []relaykit.Event, r *relaykit.Request) ([]relaykit.Event, error) {
	return h.s.decodeRequest(dst, r)
}

// decodeEvent decodes one event of a body of family (HEC's
// protocol.decode).
func (h *HEC) decodeEvent(dst []relaykit.Event, family string, enc []byte) ([]relaykit.Event, bool, error) {
	switch family {
	case hecEventFormat:
		key := ""
		if h.cfg.EventObject {
			key = h.cfg.MessageKey
		}
		dst, err := decodeHECEvent(dst, enc, key)
		return dst, true, err
	case hecRawFormat:
		return append(dst, relaykit.Event{Raw: append([]byte(nil), enc...)}), true, nil
	}
	return dst, false, nil
}

// Stats returns a snapshot of the sink's counters.
func (h *HEC) Stats() Stats { return h.s.stats() }

// Channel returns the X-Splunk-Request-Channel GUID the sink sends.
func (h *HEC) Channel() string { return h.channel }

// Close releases the idle connections of the sink's own HTTP client. It
// does not wait for Send calls in progress. It is idempotent and returns
// nil.
func (h *HEC) Close() error {
	h.s.close()
	return nil
}

func jsonOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return jsonenc.AppendString(nil, []byte(s))
}

// newGUID returns a random (version 4) UUID in canonical form.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexDigits[c>>4], hexDigits[c&0xf]
		j += 2
	}
	return string(out[:])
}

func (h *HEC) prepare(req *http.Request) error {
	req.Header["Authorization"] = []string{h.auth}
	req.Header["X-Splunk-Request-Channel"] = []string{h.channel}
	return nil
}

var errEmptyEvent = errors.New("event is empty (HEC code 13: event field cannot be blank)")

// AppendEvent appends e as one HEC event object (the /services/collector/event
// format) to dst and returns the extended slice. It does not allocate
// beyond growing dst. It fails only for an empty message when the event is
// sent as a string, which HEC rejects (code 13). The output is valid JSON
// for any bytes in e: invalid UTF-8 becomes U+FFFD.
func (h *HEC) AppendEvent(dst []byte, e *relaykit.Event) ([]byte, error) {
	return h.encodeEvent(dst, e)
}

func (h *HEC) encodeEvent(dst []byte, e *relaykit.Event) ([]byte, error) {
	if !h.cfg.EventObject && len(e.Raw) == 0 {
		return dst, errEmptyEvent
	}
	// Every member is written with a leading comma; the first comma is
	// replaced by the opening brace at the end.
	open := len(dst)
	if ns := eventNanos(e); ns > 0 {
		dst = append(dst, `,"time":`...)
		dst = appendEpochSeconds(dst, ns)
	}
	dst = h.appendMeta(dst, `,"host":`, e.Host, h.host)
	dst = h.appendMeta(dst, `,"source":`, e.Source, h.source)
	dst = h.appendMeta(dst, `,"sourcetype":`, e.SourceType, h.sourceType)
	dst = h.appendMeta(dst, `,"index":`, e.Index, h.index)
	dst = append(dst, `,"event":`...)
	if h.cfg.EventObject {
		dst = append(dst, '{')
		dst = append(dst, h.messageKey...)
		dst = append(dst, ':')
		dst = jsonenc.AppendString(dst, e.Raw)
		dst, _ = h.appendFieldMembers(dst, e, h.cfg.MessageKey)
		dst = append(dst, '}')
	} else {
		dst = jsonenc.AppendString(dst, e.Raw)
		start := len(dst)
		dst = append(dst, `,"fields":{`...)
		mark := len(dst)
		var n int
		if dst, n = h.appendFieldMembers(dst, e, ""); n == 0 {
			dst = dst[:start]
		} else {
			// Drop the first member's leading comma.
			copy(dst[mark:], dst[mark+1:])
			dst = append(dst[:len(dst)-1], '}')
		}
	}
	dst[open] = '{'
	return append(dst, '}'), nil
}

// fieldPattern is one entry of HECConfig.Fields.
type fieldPattern struct {
	key    string
	prefix bool // key is a prefix ("sd.*")
}

// selected reports whether the field named key is sent.
func selected[K ~string | ~[]byte](h *HEC, key K) bool {
	if h.allFields {
		return true
	}
	for i := range h.fieldSel {
		p := &h.fieldSel[i]
		if p.prefix && len(key) >= len(p.key) && string(key[:len(p.key)]) == p.key || string(key) == p.key {
			return true
		}
	}
	return false
}

// appendFieldMembers appends the selected fields of e, and its facility and
// severity, as `,"key":"value"` members, leaving out a field named skip,
// and returns how many it wrote.
func (h *HEC) appendFieldMembers(dst []byte, e *relaykit.Event, skip string) ([]byte, int) {
	n := 0
	for i := range e.Fields {
		f := &e.Fields[i]
		if skip != "" && string(f.Key) == skip || !selected(h, f.Key) {
			continue
		}
		dst = append(dst, ',')
		dst = jsonenc.AppendString(dst, f.Key)
		dst = append(dst, ':')
		dst = jsonenc.AppendString(dst, f.Value)
		n++
	}
	if !h.priority || e.Flags&relaykit.FlagPriority == 0 {
		return dst, n
	}
	for _, p := range [2]struct{ key, name string }{
		{"facility", syslogname.Facility(e.Priority >> 3)},
		{"severity", syslogname.Severity(e.Priority & 7)},
	} {
		if _, exists := e.Field(p.key); exists || p.key == skip || !selected(h, p.key) {
			continue
		}
		dst = append(dst, `,"`...)
		dst = append(dst, p.key...)
		dst = append(dst, `":"`...)
		dst = append(dst, p.name...)
		dst = append(dst, '"')
		n++
	}
	return dst, n
}

// appendMeta appends a metadata member: the event's value, else the
// JSON-encoded default, else nothing; with OverrideEventMeta the default
// comes first.
func (h *HEC) appendMeta(dst []byte, key string, v, def []byte) []byte {
	switch {
	case len(v) > 0 && (def == nil || !h.cfg.OverrideEventMeta):
		dst = append(dst, key...)
		return jsonenc.AppendString(dst, v)
	case def != nil:
		dst = append(dst, key...)
		return append(dst, def...)
	}
	return dst
}

// encodeRaw appends the message for /services/collector/raw.
func (h *HEC) encodeRaw(dst []byte, e *relaykit.Event) ([]byte, error) {
	if len(e.Raw) == 0 {
		return dst, errEmptyEvent
	}
	return append(dst, e.Raw...), nil
}

func eventNanos(e *relaykit.Event) int64 {
	if e.Time != 0 {
		return e.Time
	}
	return e.ReceiveTime
}

// eventIndex is the index an event is sent to (empty: the token's default).
func (h *HEC) eventIndex(e *relaykit.Event) []byte {
	if h.cfg.Endpoint != HECRaw && len(e.Index) > 0 && (len(h.defIndex) == 0 || !h.cfg.OverrideEventMeta) {
		return e.Index
	}
	return h.defIndex
}

// errIncorrectIndex is the error of events for an index HEC refused.
type errIncorrectIndex struct{ index string }

func (e *errIncorrectIndex) Error() string {
	return fmt.Sprintf("incorrect index %q (HEC code 7): the token may not write to it", e.index)
}

func (h *HEC) reject(e *relaykit.Event) error {
	if h.nBad.Load() == 0 {
		return nil
	}
	idx := h.eventIndex(e)
	h.badMu.RLock()
	_, bad := h.badIndexes[string(idx)]
	h.badMu.RUnlock()
	if bad {
		return &errIncorrectIndex{index: string(idx)}
	}
	return nil
}

func (h *HEC) markBadIndex(idx []byte) {
	h.badMu.Lock()
	defer h.badMu.Unlock()
	if _, ok := h.badIndexes[string(idx)]; ok || len(h.badIndexes) >= maxBadIndexes {
		return
	}
	h.badIndexes[string(idx)] = struct{}{}
	h.nBad.Add(1)
	h.s.cfg.Logger.Error("forward: HEC refused an index; its events are rejected without sending",
		"destination", h.s.dest, "index", string(idx))
}

// hecReply is an HEC response body.
type hecReply struct {
	Text               string          `json:"text"`
	Code               *int            `json:"code"`
	InvalidEventNumber *int            `json:"invalid-event-number"`
	AckID              *int64          `json:"ackId"`
	Acks               map[string]bool `json:"acks"`
}

// hecError is the error of an HEC response with a code.
type hecError struct {
	code int
	text string
}

func (e *hecError) Error() string {
	t := e.text
	if len(t) > 200 {
		t = t[:200]
	}
	return fmt.Sprintf("HEC code %d: %s", e.code, strconv.Quote(t))
}

func (h *HEC) classify(r *response) verdict {
	var rep hecReply
	if len(r.Body) == 0 || json.Unmarshal(r.Body, &rep) != nil || rep.Code == nil {
		v := classifyHTTP(r)
		if v.outcome == outcomeOK && h.cfg.Ack {
			// Without a code there is no ackId to confirm: send again.
			return verdict{outcome: outcomeRetry, code: -1, ackID: -1, err: errors.New("2xx response without an HEC code and ackId")}
		}
		return v
	}
	code := *rep.Code
	v := verdict{code: code, ackID: -1, err: &hecError{code: code, text: rep.Text}}
	switch code {
	case 0:
		v.outcome, v.err = outcomeOK, nil
		if h.cfg.Ack {
			if rep.AckID == nil {
				return verdict{outcome: outcomeRetry, code: 0, ackID: -1, err: errors.New("indexer acknowledgement is on, but HEC sent no ackId (is useACK enabled for the token?)")}
			}
			v.ackID = *rep.AckID
		}
	case 1, 2, 3, 4, 16:
		v.outcome, v.reason = outcomeFatal, relaykit.ReasonUnauthorized
	case 5, 6, 12, 13, 15:
		v.outcome, v.reason = outcomeFatal, relaykit.ReasonRejected
		if n := rep.InvalidEventNumber; n != nil && *n >= 0 && *n < r.Events {
			v.outcome, v.index = outcomePartial, *n
		}
	case 7:
		v.outcome, v.reason = outcomeFatal, relaykit.ReasonRejected
		if k, sure, ok := incorrectIndexEvent(h, r, rep.InvalidEventNumber); ok {
			if sure {
				h.markBadIndex(h.eventIndex(r.Event(k)))
			}
			v.outcome, v.index = outcomePartial, k
		} else if idx, ok := singleIndex(h, r); ok {
			h.markBadIndex(idx)
		}
	case 8, 9, 18, 19, 20:
		v.outcome = outcomeRetry
		v.retryAfter = parseRetryAfter(r.Header, time.Now())
	default:
		w := classifyHTTP(r)
		v.outcome, v.reason, v.retryAfter = w.outcome, w.reason, w.retryAfter
		if v.outcome == outcomeOK {
			v.outcome, v.reason = outcomeFatal, relaykit.ReasonRejected
		}
	}
	if r.Status == http.StatusRequestEntityTooLarge {
		v.outcome = outcomeSplit
	}
	return v
}

// incorrectIndexEvent returns the event a code 7 response refers to, and
// whether that is certain. invalid-event-number is documented as the
// 0-based number n of the bad event, but some Splunk versions have been
// reported to send n+1 for code 7 only. The request tells the readings
// apart when it can: events before n-1 were accepted under both, so their
// indexes are good. n means n-1 when n equals the event count, when event
// n-1 has the index of event n (HEC would have refused n-1 first), or when
// event n's index is known good; n means n when event n-1's index is known
// good. Otherwise it is uncertain, and the caller rejects event n-1 without
// blaming its index and sends the rest on: nothing is lost, though event
// n-1 may then be both indexed and reported rejected.
func incorrectIndexEvent(h *HEC, r *response, num *int) (k int, sure, ok bool) {
	if num == nil || *num < 0 || *num > r.Events || r.Events == 0 {
		return 0, false, false
	}
	k = *num
	switch {
	case k == 0:
		return 0, true, true
	case k == r.Events:
		return k - 1, true, true
	}
	prev, cur := h.eventIndex(r.Event(k-1)), h.eventIndex(r.Event(k))
	if string(prev) == string(cur) {
		return k - 1, true, true
	}
	for j := 0; j < k-1; j++ {
		switch string(h.eventIndex(r.Event(j))) {
		case string(cur):
			return k - 1, true, true
		case string(prev):
			return k, true, true
		}
	}
	return k - 1, false, true
}

// singleIndex reports the index of the request's events when they all share
// one.
func singleIndex(h *HEC, r *response) ([]byte, bool) {
	if r.Events == 0 {
		return nil, false
	}
	idx := h.eventIndex(r.Event(0))
	for i := 1; i < r.Events; i++ {
		if string(h.eventIndex(r.Event(i))) != string(idx) {
			return nil, false
		}
	}
	return idx, true
}

// confirm polls /services/collector/ack until v.ackID is acknowledged, or
// answers Retry (the events are reported retryable) after AckTimeout.
func (h *HEC) confirm(ctx context.Context, _ *response, v verdict) verdict {
	deadline := time.Now().Add(h.cfg.AckTimeout)
	body := `{"acks":[` + strconv.FormatInt(v.ackID, 10) + `]}`
	key := strconv.FormatInt(v.ackID, 10)
	var lastErr error
	for {
		if err := sleep(ctx, min(h.cfg.AckPollInterval, time.Until(deadline))); err != nil {
			return verdict{outcome: outcomeRetry, code: -1, ackID: -1, err: err}
		}
		acked, err := h.pollAck(ctx, body, key)
		if acked {
			return v
		}
		if err != nil {
			lastErr = err
		}
		if !time.Now().Before(deadline) {
			err := fmt.Errorf("ackId %d not acknowledged within %v (its events may be indexed twice if sent again)", v.ackID, h.cfg.AckTimeout)
			if lastErr != nil {
				err = fmt.Errorf("%w (last poll error: %w)", err, lastErr)
			}
			return verdict{outcome: outcomeRetry, code: -1, ackID: -1, err: err}
		}
	}
}

func (h *HEC) pollAck(ctx context.Context, body, key string) (bool, error) {
	actx, cancel := context.WithTimeout(ctx, h.s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, h.ackURL, strings.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	setUserAgent(req)
	_ = h.prepare(req)
	resp, err := h.s.client.Do(req)
	if err != nil {
		return false, scrubURLError(err)
	}
	b, err := readBody(resp.Body, nil)
	_ = resp.Body.Close()
	if err != nil {
		return false, err
	}
	var rep hecReply
	if err := json.Unmarshal(b, &rep); err != nil {
		return false, fmt.Errorf("ack poll: HTTP %d: unparsable body", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		if rep.Code != nil {
			return false, fmt.Errorf("ack poll: HTTP %d: %w", resp.StatusCode, &hecError{code: *rep.Code, text: rep.Text})
		}
		return false, fmt.Errorf("ack poll: HTTP %d", resp.StatusCode)
	}
	return rep.Acks[key], nil
}

// checkHealth asks /services/collector/health whether HEC accepts data. Only
// a 503 (HEC codes 9, 18-20) or no answer at all count as unhealthy: any
// other status (an old Splunk without the endpoint, a proxy) lets the data
// request find out. An unhealthy answer is returned as a *SendError with
// the Retry-After it named.
func (h *HEC) checkHealth(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, h.s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, h.health, http.NoBody)
	if err != nil {
		return err
	}
	setUserAgent(req)
	resp, err := h.s.client.Do(req)
	if err != nil {
		return scrubURLError(err)
	}
	b, _ := readBody(resp.Body, nil)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		return nil
	}
	se := &SendError{Destination: h.s.dest, StatusCode: resp.StatusCode, Code: -1, Retryable: true,
		RetryAfter: parseRetryAfter(resp.Header, time.Now()), Err: errors.New("unhealthy")}
	var rep hecReply
	if json.Unmarshal(b, &rep) == nil && rep.Code != nil {
		se.Code, se.Err = *rep.Code, &hecError{code: *rep.Code, text: rep.Text}
	}
	return se
}

// Validate reports whether [NewHEC] would accept cfg, without sending
// anything: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg HECConfig) Validate() error {
	h, err := NewHEC(cfg)
	if err != nil {
		return err
	}
	return h.Close()
}
