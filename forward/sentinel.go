package forward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/relaykit/relaykit/internal/jsonenc"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// Logs Ingestion API facts.
const (
	// SentinelAPIVersion is the api-version of the Azure Monitor Logs
	// Ingestion API the [Sentinel] sink uses.
	SentinelAPIVersion = "2023-01-01"
	// SentinelMaxRequestBytes is the limit the sink keeps one call
	// within, uncompressed and compressed alike: 1,000,000 bytes. Azure
	// documents the maximum size of a call as "1 MB", for compressed and
	// uncompressed data; the service has been seen to answer 413
	// ContentLengthLimitExceeded only above 1,048,576 bytes, but the
	// decimal reading is the one no deployment refuses.
	SentinelMaxRequestBytes = 1_000_000
	// SentinelAuxiliaryMaxSpan is the widest range of TimeGenerated one
	// call to a table with the Auxiliary plan may hold: the service refuses
	// a call whose rows span 30 minutes or more
	// (RecordsTimeRangeIsMoreThan30Minutes), so the sink splits requests
	// to keep each row within less than this of every other.
	SentinelAuxiliaryMaxSpan = 30 * time.Minute
	// maxColumnName is the longest Log Analytics column name.
	maxColumnName = 45
)

// SentinelColumns names the table columns an event's parts go to. Every
// name must start with a letter and hold at most 45 letters, digits and
// underscores, and all must be distinct. A column named "-" is left out.
type SentinelColumns struct {
	// Time receives the event time (Event.Time, else ReceiveTime, else the
	// time of encoding) as an RFC 3339 UTC timestamp with 7 fractional
	// digits (100 ns, the precision of a Log Analytics datetime), or 6 for
	// an Auxiliary table ([SentinelAuxiliary]). Zero means
	// "TimeGenerated", which every custom table has.
	Time string
	// Message receives Event.Raw as a string (invalid UTF-8 becomes
	// U+FFFD). Zero means "RawData".
	Message string
	// Host receives Event.Host, when not empty. Zero means "Computer".
	Host string
	// Source receives Event.Source, when not empty. Zero means left out.
	Source string
	// SourceType receives Event.SourceType, when not empty. Zero means
	// left out.
	SourceType string
	// Facility and Severity receive the syslog facility and severity as
	// numbers, for events with a priority. Zero means left out.
	Facility, Severity string
	// Fields receives all of the event's fields as one JSON object of
	// strings (a dynamic column). Zero means left out. An Auxiliary table
	// has no dynamic columns: set with [SentinelAuxiliary] it is a
	// configuration error.
	Fields string
}

// SentinelField maps one event field to a column of its own.
type SentinelField struct {
	// Field is the event field's key. An event without it leaves the column
	// out.
	Field string
	// Column is the column name. Zero means Field, which must then be a
	// valid column name.
	Column string
}

// SentinelConfig configures a [Sentinel] sink. Endpoint, DCRImmutableID,
// Stream and TokenSource are required; every other zero field means the
// documented default.
type SentinelConfig struct {
	// Endpoint is the logs ingestion endpoint: the data collection
	// endpoint's URL (or the rule's own ingestion endpoint), e.g.
	// "https://my-dce-a1b2.westeurope-1.ingest.monitor.azure.com".
	Endpoint string
	// DCRImmutableID is the data collection rule's immutable ID,
	// "dcr-" followed by 32 hex digits.
	DCRImmutableID string
	// Stream is the stream declared in the rule, e.g. "Custom-MyTable_CL".
	Stream string

	// TokenSource supplies the bearer tokens, normally an
	// [EntraTokenSource] for a service principal that has the Monitoring
	// Metrics Publisher role on the rule. The sink caches tokens in a
	// [TokenCache] and refreshes them TokenRefreshBefore their expiry.
	TokenSource TokenSource
	// TokenRefreshBefore is how long before expiry a token is refreshed.
	// Zero means [DefaultTokenRefreshBefore].
	TokenRefreshBefore time.Duration

	// Table selects the row layout: zero ([SentinelCustom]) maps the
	// event's parts by Columns and Fields; [SentinelSyslog] and
	// [SentinelCommonSecurityLog] write rows of Sentinel's built-in Syslog
	// and CommonSecurityLog tables. With a built-in table, Columns must be
	// zero, Stream defaults to the table's stream ([SentinelTable.Stream])
	// (set it to a rule's own input stream declared with the table's
	// columns and an outputStream of the table), and every Fields column
	// must end in "_CF", as custom columns added to an Azure table do.
	Table SentinelTable
	// CollectorHostName, when set, fills the CollectorHostName column of
	// the built-in tables: the name of the host that collected the events
	// (the relay's). Zero means the column is left out. Ignored for
	// SentinelCustom.
	CollectorHostName string

	// Plan is the table plan of the destination table: zero
	// ([SentinelAnalytics]), [SentinelBasic] (the same rows) or
	// [SentinelAuxiliary] (custom tables only: TimeGenerated with 6
	// fractional digits, no Fields column). See [SentinelPlan].
	Plan SentinelPlan

	// Columns maps the event's parts to columns.
	Columns SentinelColumns
	// Fields are event fields sent as columns of their own, in this order.
	Fields []SentinelField

	// HTTP holds client, TLS, timeouts, limits, compression and hooks.
	// MaxRequestBytes defaults to, and may not exceed,
	// [SentinelMaxRequestBytes]; MaxEventBytes defaults to it too.
	HTTP HTTPConfig
}

// Sentinel is a [relaykit.Sink] that sends events to Microsoft Sentinel (a
// Log Analytics workspace) through the Azure Monitor Logs Ingestion API:
//
//	POST {Endpoint}/dataCollectionRules/{DCRImmutableID}/streams/{Stream}?api-version=2023-01-01
//
// with a gzipped JSON array of row objects, "Authorization: Bearer
// <token>" and a new x-ms-client-request-id (a random UUID) per attempt,
// which the service logs for support cases. The service answers 204 when
// it accepted the rows.
//
// Send makes one attempt per request, with the service's rules, and
// reports every row it did not deliver in a [*relaykit.BatchError]; it
// does not retry. Put it behind a delivery.Queue to retry. A batch is
// split so that no call exceeds 1,000,000 bytes of JSON, uncompressed or
// compressed (nor, for an Auxiliary table, holds rows whose TimeGenerated
// span 30 minutes or more); a 413 anyway
// halves the request and sends both halves, and a single row over the
// limit fails permanently with [relaykit.ReasonTooLarge]; 429 and 5xx are
// retryable, with the Retry-After, retry-after-ms or x-ms-retry-after-ms
// the service named as the FailedRange's RetryAfter; a 401 discards the
// cached token and sends the request once more with a new one, then fails
// permanently with [relaykit.ReasonUnauthorized], as does a 403; a 400
// (the rows do not match the stream's schema, a wrong stream or version)
// fails permanently with [relaykit.ReasonRejected] and the service's error
// message. A token source that refuses the credentials (a [*TokenError]
// that is not Temporary) fails batches with ReasonUnauthorized without
// sending them; a temporary token error is retryable.
//
// Behind a retrying queue delivery is at least once: a request whose
// response was lost (timeout, reset connection) is reported retryable, and
// rows the service had accepted are then ingested twice.
//
// A Sentinel is safe for concurrent use by multiple goroutines.
type Sentinel struct {
	s      *sender
	tokens *TokenCache
	dest   string
	table  SentinelTable
	digits int // fractional digits of TimeGenerated: 7, or 6 on an Auxiliary table

	collectorHost []byte        // `,"CollectorHostName":"..."`, or nil
	names         sentinelNames // column names, for DecodeRequest

	// Pre-encoded `"Column":` keys (with a leading comma except the first),
	// nil when the column is left out.
	timeKey, msgKey, hostKey, sourceKey, sourceTypeKey []byte
	facilityKey, severityKey, fieldsKey                []byte
	fields                                             []sentinelField
}

type sentinelField struct {
	field string
	key   []byte // `,"Column":`
}

var _ relaykit.RequestSink = (*Sentinel)(nil)

// validColumnName reports whether s is a valid Log Analytics column name:
// a letter, then letters, digits or underscores, at most 45 in all.
func validColumnName(s string) bool {
	if len(s) == 0 || len(s) > maxColumnName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter || !letter && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	return true
}

// NewSentinel returns a Sentinel sink for cfg, or a *relaykit.FieldError
// wrapping [ErrInvalidConfig].
func NewSentinel(cfg SentinelConfig) (*Sentinel, error) {
	if cfg.HTTP.Name == "" {
		cfg.HTTP.Name = "sentinel"
	}
	name := cfg.HTTP.Name
	invalid := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	if cfg.Stream == "" {
		cfg.Stream = cfg.Table.Stream()
	}
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case cfg.Endpoint == "":
		return nil, invalid("Endpoint", "required")
	case err != nil, u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return nil, invalid("Endpoint", "must be https://host[:port]")
	case u.User != nil, u.RawQuery != "", u.Fragment != "":
		return nil, invalid("Endpoint", "must not hold credentials, a query or a fragment")
	case cfg.Table > SentinelCommonSecurityLog:
		return nil, invalid("Table", "unknown table %v", cfg.Table)
	case cfg.Table != SentinelCustom && cfg.Columns != (SentinelColumns{}):
		return nil, invalid("Columns", "do not apply to the %v table, whose columns are fixed", cfg.Table)
	case cfg.Plan > SentinelAuxiliary:
		return nil, invalid("Plan", "unknown plan %v", cfg.Plan)
	case cfg.Plan == SentinelAuxiliary && cfg.Table != SentinelCustom:
		return nil, invalid("Plan", "the Auxiliary plan is for custom tables only, not the %v table", cfg.Table)
	case cfg.Plan == SentinelAuxiliary && cfg.Columns.Fields != "" && cfg.Columns.Fields != "-":
		return nil, invalid("Columns.Fields", "%q: an Auxiliary table has no dynamic columns (send fields to columns of their own with Fields, or leave it out)", cfg.Columns.Fields)
	case cfg.DCRImmutableID == "":
		return nil, invalid("DCRImmutableID", "required")
	case !validPathSegment(cfg.DCRImmutableID):
		return nil, invalid("DCRImmutableID", "%q is not a rule ID", cfg.DCRImmutableID)
	case cfg.Stream == "":
		return nil, invalid("Stream", "required")
	case !validPathSegment(cfg.Stream):
		return nil, invalid("Stream", "%q is not a stream name", cfg.Stream)
	case cfg.TokenSource == nil:
		return nil, invalid("TokenSource", "required")
	case cfg.TokenRefreshBefore < 0:
		return nil, invalid("TokenRefreshBefore", "is negative")
	case cfg.HTTP.MaxRequestBytes > SentinelMaxRequestBytes:
		return nil, invalid("HTTP.MaxRequestBytes", "%d exceeds the service's limit of %d", cfg.HTTP.MaxRequestBytes, SentinelMaxRequestBytes)
	}

	st := &Sentinel{dest: name, table: cfg.Table, digits: cfg.Plan.timeDigits(), names: defaultSentinelNames}
	cols := cfg.Columns
	if cfg.Table == SentinelCustom {
		pick := func(col, def string) string {
			if col == "" {
				return def
			}
			return col
		}
		st.names = sentinelNames{
			time: pick(cols.Time, "TimeGenerated"), msg: pick(cols.Message, "RawData"), host: pick(cols.Host, "Computer"),
			source: cols.Source, sourceType: cols.SourceType, facility: cols.Facility, severity: cols.Severity, fields: cols.Fields,
		}
	}
	seen := map[string]bool{}
	first := true
	key := func(field, what, col, def string) ([]byte, error) {
		if col == "" {
			col = def
		}
		if col == "" || col == "-" {
			return nil, nil
		}
		if !validColumnName(col) {
			return nil, invalid(field, "%s column %q: a column name starts with a letter and has at most 45 letters, digits and underscores", what, col)
		}
		if seen[strings.ToLower(col)] {
			return nil, invalid(field, "column %q is used twice", col)
		}
		seen[strings.ToLower(col)] = true
		var k []byte
		if !first {
			k = append(k, ',')
		}
		first = false
		k = jsonenc.AppendString(k, []byte(col))
		return append(k, ':'), nil
	}
	for _, c := range []struct {
		dst       *[]byte
		what, col string
		def       string
	}{
		{&st.timeKey, "Time", cols.Time, "TimeGenerated"},
		{&st.msgKey, "Message", cols.Message, "RawData"},
		{&st.hostKey, "Host", cols.Host, "Computer"},
		{&st.sourceKey, "Source", cols.Source, ""},
		{&st.sourceTypeKey, "SourceType", cols.SourceType, ""},
		{&st.facilityKey, "Facility", cols.Facility, ""},
		{&st.severityKey, "Severity", cols.Severity, ""},
		{&st.fieldsKey, "Fields", cols.Fields, ""},
	} {
		if *c.dst, err = key("Columns."+c.what, c.what, c.col, c.def); err != nil {
			return nil, err
		}
	}
	if st.timeKey == nil {
		return nil, invalid("Columns.Time", "the Time column cannot be left out (TimeGenerated is required)")
	}
	if cfg.Table != SentinelCustom {
		// The row starts with TimeGenerated; custom columns follow.
		first = false
		if cfg.CollectorHostName != "" {
			st.collectorHost = append([]byte(`,"CollectorHostName":`), jsonenc.AppendString(nil, []byte(cfg.CollectorHostName))...)
		}
	}
	for i, f := range cfg.Fields {
		if f.Field == "" {
			return nil, invalid(fmt.Sprintf("Fields[%d].Field", i), "required")
		}
		col := f.Column
		if col == "" {
			col = f.Field
		}
		k, err := key(fmt.Sprintf("Fields[%d].Column", i), "field "+f.Field, col, "")
		if err != nil {
			return nil, err
		}
		if k == nil {
			return nil, invalid(fmt.Sprintf("Fields[%d].Column", i), "field %q has no column", f.Field)
		}
		if cfg.Table != SentinelCustom && !strings.HasSuffix(col, "_CF") {
			return nil, invalid(fmt.Sprintf("Fields[%d].Column", i), "field %q: column %q added to the %v table must end in _CF", f.Field, col, cfg.Table)
		}
		st.fields = append(st.fields, sentinelField{field: f.Field, key: k})
	}

	st.tokens = NewTokenCache(cfg.TokenSource, cfg.TokenRefreshBefore)
	p := protocol{
		url: strings.TrimRight(u.String(), "/") + "/dataCollectionRules/" + url.PathEscape(cfg.DCRImmutableID) +
			"/streams/" + url.PathEscape(cfg.Stream) + "?api-version=" + SentinelAPIVersion,
		contentType: "application/json",
		prefix:      []byte("["),
		separator:   []byte(","),
		suffix:      []byte("]"),
		encode: func(dst []byte, e *relaykit.Event) ([]byte, error) {
			return st.AppendEvent(dst, e), nil
		},
		prepare:  st.prepare,
		classify: st.classify,
		format:   "sentinel." + cfg.Table.String(),
		decode:   st.decodeRow,
		maxWire:  SentinelMaxRequestBytes,
	}
	if cfg.Plan == SentinelAuxiliary {
		p.rowTime, p.maxSpan = rowNanos, SentinelAuxiliaryMaxSpan
	}
	st.s, err = newSender("sentinel", cfg.HTTP, p, SentinelMaxRequestBytes, SentinelMaxRequestBytes)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// validPathSegment accepts the characters of rule IDs and stream names.
func validPathSegment(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return len(s) <= 256
}

// Send delivers batch to the Logs Ingestion API with one attempt per
// request. It returns nil when every row was accepted, else a
// [*relaykit.BatchError] listing the undelivered events: permanent
// (rejected, too large, unauthorized) or retryable, with the RetryAfter
// the service asked for; wrapped with ctx.Err() when ctx ended first. See
// [Sentinel] for the classification. It reads batch only until it
// returns.
func (st *Sentinel) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return ctx.Err()
	}
	if err := st.refusedCredentials(ctx, len(batch)); err != nil {
		return err
	}
	return st.s.send(ctx, batch)
}

// refusedCredentials returns the error of a batch of n events when the
// token source refuses the credentials: they cannot succeed, and are
// failed as unauthorized without sending them (a temporary token error
// fails each request as retryable instead).
func (st *Sentinel) refusedCredentials(ctx context.Context, n int) error {
	if _, _, err := st.tokens.Token(ctx); err != nil {
		var te *TokenError
		if errors.As(err, &te) && !te.Temporary {
			bs := &batchState{s: st.s}
			st.s.failRange(bs, 0, n, relaykit.ReasonUnauthorized,
				&SendError{Destination: st.dest, Code: -1, Err: err})
			return bs.batchErr()
		}
	}
	return nil
}

// EncodeRequests appends to dst the requests that carry batch, as Send
// would send them (split at 1,000,000 bytes, and for an Auxiliary table at
// 30 minutes of TimeGenerated), gzipped, for a queue to store and send
// later with [Sentinel.SendRequests]; see [relaykit.RequestSink]. Rows
// over the limit are listed in the returned *relaykit.BatchError
// ([relaykit.ReasonTooLarge]); the requests carry the others. Their
// Format is "sentinel.<table>", with "+gzip" unless DisableGzip. It
// allocates nothing once dst's buffers are warm.
func (st *Sentinel) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	return st.s.encodeRequests(dst, batch)
}

// SendRequests sends requests made by EncodeRequests, their stored bodies
// as they are, one attempt each, and reports what was not delivered as
// Send does (event positions counting through reqs); see
// [relaykit.RequestSink]. Rows of a request of another table are decoded
// and sent as this sink's rows.
func (st *Sentinel) SendRequests(ctx context.Context, reqs []relaykit.Request) error {
	n := 0
	for i := range reqs {
		n += reqs[i].Events
	}
	if n == 0 {
		return ctx.Err()
	}
	if err := st.refusedCredentials(ctx, n); err != nil {
		return err
	}
	return st.s.sendRequests(ctx, reqs)
}

// CutRequest returns a request of the rows [from, to) of r, the same
// bytes, compressed again; see [relaykit.RequestSink].
func (st *Sentinel) CutRequest(r *relaykit.Request, from, to int) (relaykit.Request, error) {
	return st.s.cutRequest(r, from, to)
}

// DecodeRequest appends the rows of r to dst as events: TimeGenerated (or
// EventTime) as Time, Computer as Host, ProcessName as Source, the message
// column as Raw (a row without one, such as a CommonSecurityLog row of a
// CEF event, has its JSON text as Raw), Facility and SeverityLevel as the
// priority, and every other column as a field of its name; see
// [relaykit.RequestSink].
func (st *Sentinel) DecodeRequest(dst []relaykit.Event, r *relaykit.Request) ([]relaykit.Event, error) {
	return st.s.decodeRequest(dst, r)
}

// Stats returns a snapshot of the sink's counters.
func (st *Sentinel) Stats() Stats { return st.s.stats() }

// Close releases the idle connections of the sink's own HTTP client. It
// does not wait for Send calls in progress. It is idempotent and returns
// nil.
func (st *Sentinel) Close() error {
	st.s.close()
	return nil
}

// AppendEvent appends e as one JSON row object, as sent in the request
// array, to dst and returns the extended slice. It does not allocate beyond
// growing dst, and its output is valid JSON for any bytes in e (invalid
// UTF-8 becomes U+FFFD).
func (st *Sentinel) AppendEvent(dst []byte, e *relaykit.Event) []byte {
	switch st.table {
	case SentinelSyslog:
		dst = st.appendSyslogRow(dst, e)
	case SentinelCommonSecurityLog:
		dst = st.appendCEFRow(dst, e)
	default:
		return st.appendCustomRow(dst, e)
	}
	dst = append(dst, st.collectorHost...)
	return append(st.appendFields(dst, e), '}')
}

// appendFields appends the columns of SentinelConfig.Fields.
func (st *Sentinel) appendFields(dst []byte, e *relaykit.Event) []byte {
	for i := range st.fields {
		f := &st.fields[i]
		if v, ok := e.Field(f.field); ok {
			dst = append(dst, f.key...)
			dst = jsonenc.AppendString(dst, v)
		}
	}
	return dst
}

func (st *Sentinel) appendCustomRow(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	ns := e.Time
	if ns == 0 {
		ns = e.ReceiveTime
	}
	if ns == 0 {
		ns = time.Now().UnixNano() // an event with no time at all (rare)
	}
	dst = append(dst, st.timeKey...)
	dst = append(dst, '"')
	dst = appendTimestamp(dst, ns, st.digits)
	dst = append(dst, '"')
	if st.msgKey != nil {
		dst = append(dst, st.msgKey...)
		dst = jsonenc.AppendString(dst, e.Raw)
	}
	dst = appendStringColumn(dst, st.hostKey, e.Host)
	dst = appendStringColumn(dst, st.sourceKey, e.Source)
	dst = appendStringColumn(dst, st.sourceTypeKey, e.SourceType)
	if e.Flags&relaykit.FlagPriority != 0 {
		if st.facilityKey != nil {
			dst = append(dst, st.facilityKey...)
			dst = strconv.AppendUint(dst, uint64(e.Priority>>3), 10)
		}
		if st.severityKey != nil {
			dst = append(dst, st.severityKey...)
			dst = strconv.AppendUint(dst, uint64(e.Priority&7), 10)
		}
	}
	if st.fieldsKey != nil {
		dst = append(dst, st.fieldsKey...)
		dst = append(dst, '{')
		for i := range e.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, e.Fields[i].Key)
			dst = append(dst, ':')
			dst = jsonenc.AppendString(dst, e.Fields[i].Value)
		}
		dst = append(dst, '}')
	}
	return append(st.appendFields(dst, e), '}')
}

func appendStringColumn(dst, key, v []byte) []byte {
	if key == nil || len(v) == 0 {
		return dst
	}
	dst = append(dst, key...)
	return jsonenc.AppendString(dst, v)
}

func (st *Sentinel) prepare(req *http.Request) error {
	tok, _, err := st.tokens.Token(req.Context())
	if err != nil {
		return err
	}
	req.Header["Authorization"] = []string{"Bearer " + tok}
	req.Header["X-Ms-Client-Request-Id"] = []string{newGUID()}
	return nil
}

// sentinelError is the service's error body: {"error":{"code","message"}}.
type sentinelError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serviceError returns the error the response body (or x-ms-error-code)
// describes, or nil.
func serviceError(r *response) error {
	var body sentinelError
	_ = json.Unmarshal(r.Body, &body)
	code, msg := body.Error.Code, body.Error.Message
	if code == "" {
		code = r.Header.Get("x-ms-error-code")
	}
	switch {
	case code != "" && msg != "":
		return fmt.Errorf("%s: %s", code, msg)
	case code != "":
		return errors.New(code)
	case msg != "":
		return errors.New(msg)
	}
	return nil
}

func (st *Sentinel) classify(r *response) verdict {
	v := classifyHTTP(r)
	if v.outcome == outcomeOK {
		return v
	}
	if err := serviceError(r); err != nil {
		v.err = err
	}
	if r.Status == http.StatusUnauthorized {
		// The token expired early or was revoked: fetch a new one and
		// send once more; the core makes a second 401 permanent.
		st.tokens.Invalidate()
		v.outcome = outcomeReauth
		v.reason = relaykit.ReasonUnauthorized
	}
	return v
}

// Validate reports whether [NewSentinel] would accept cfg, without sending
// anything: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg SentinelConfig) Validate() error {
	s, err := NewSentinel(cfg)
	if err != nil {
		return err
	}
	return s.Close()
}
