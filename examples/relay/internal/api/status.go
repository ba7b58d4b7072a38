package api

import (
	"embed"
	"io/fs"
	"net/http"
	"time"
)

// statusPage is the status page, one HTML file with its script inline: no
// build step, nothing fetched from elsewhere.
//
//go:embed status/index.html
var statusPage embed.FS

// Status is what GET /api/status answers: the relay's counters now, as
// the status page and `relay top` show them. Counters are totals since
// the start (a route's since the last reload); rates are the client's
// differences between two calls.
type Status struct {
	// Time is when the snapshot was taken; Uptime is seconds since the
	// relay started.
	Time   time.Time `json:"time"`
	Uptime float64   `json:"uptime_seconds"`
	// Ready is false while starting or stopping (what /healthz says).
	Ready        bool                `json:"ready"`
	Inputs       []InputStatus       `json:"inputs"`
	Routes       []RouteStatus       `json:"routes"`
	Destinations []DestinationStatus `json:"destinations"`
	Ledger       LedgerStatus        `json:"ledger"`
	// Sources summarises the per-source tracking (nil when sources are
	// off); GET /api/sources lists them.
	Sources *SourcesStatus `json:"sources,omitempty"`
	// Taps lists the tap points (what GET /api/tap?at= takes) with their
	// open subscriptions.
	Taps []TapStatus `json:"taps"`
}

// InputStatus is one input.
type InputStatus struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Received counts events received (dropped ones included); Bytes the
	// message bytes.
	Received int64 `json:"received"`
	Bytes    int64 `json:"bytes"`
	// Connections is the number of open connections; -1 for an input
	// without connections (UDP, Kafka, the generator).
	Connections int64 `json:"connections"`
	// Dropped counts the input's drops (rate limits, full rings, invalid
	// JSON, ...); ParseErrors the events forwarded raw.
	Dropped     int64 `json:"dropped"`
	ParseErrors int64 `json:"parse_errors"`
	// Proxy is what its PROXY protocol stage did; nil when
	// proxy_protocol is off.
	Proxy *ProxyStatus `json:"proxy,omitempty"`
	// TLS is the certificate it serves; nil without TLS.
	TLS *TLSStatus `json:"tls,omitempty"`
}

// ProxyStatus is an input's PROXY protocol stage.
type ProxyStatus struct {
	Mode string `json:"mode"` // optional or required
	// Headers counts the headers that named a sender, Local those that
	// named none (health checks); Refused the connections closed for a
	// header not allowed, malformed, missing or late.
	Headers int64 `json:"headers"`
	Local   int64 `json:"local"`
	Refused int64 `json:"refused"`
}

// TLSStatus is the certificate a TLS input serves: what senders pin, and
// when it must be renewed.
type TLSStatus struct {
	SHA256   string    `json:"sha256"` // of the certificate's DER, as openssl x509 -fingerprint -sha256 prints it
	Subject  string    `json:"subject"`
	Names    []string  `json:"names"` // its DNS names and IP addresses
	NotAfter time.Time `json:"not_after"`
	Reloads  int64     `json:"reloads"`
	// ReloadErrors counts the reloads that kept the certificate in use;
	// Error is the last one's while it is the latest reload.
	ReloadErrors int64  `json:"reload_errors"`
	Error        string `json:"error,omitempty"`
}

// RouteStatus is one route of the route table in use.
type RouteStatus struct {
	Name string `json:"name"`
	// Matched counts the events the route's filter took; Out those it
	// queued to its destinations; Dropped those its steps or the lack of
	// a destination dropped.
	Matched uint64 `json:"matched"`
	Out     uint64 `json:"out"`
	Dropped uint64 `json:"dropped"`
}

// DestinationStatus is one destination.
type DestinationStatus struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// In counts the events handed to it, Delivered those it accepted,
	// Dropped those it lost.
	In        int64 `json:"in"`
	Delivered int64 `json:"delivered"`
	Dropped   int64 `json:"dropped"`
	// Pending counts events accepted and not delivered yet; Backlog and
	// SpoolBytes are the spool's share of them, on disk.
	Pending    int64 `json:"pending"`
	Backlog    int64 `json:"backlog"`
	SpoolBytes int64 `json:"spool_bytes"`
	// State is "ok", "backlog" (healthy, the spool not empty),
	// "failing" (the last send failed: retrying) or "disk_failing" (the
	// spool refuses writes).
	State string `json:"state"`
}

// LedgerStatus is the relay's ledger: where every received event went.
type LedgerStatus struct {
	Received  int64            `json:"received"`
	Routed    int64            `json:"routed"`
	Queued    int64            `json:"queued"`
	Delivered int64            `json:"delivered"`
	Archived  int64            `json:"archived"`
	Pending   int64            `json:"pending"`
	Dropped   int64            `json:"dropped"`
	ByReason  map[string]int64 `json:"dropped_by_reason"`
	Reduced   int64            `json:"reduced"`
	Produced  int64            `json:"produced"`
}

// SourcesStatus counts the tracked sources.
type SourcesStatus struct {
	Tracked int    `json:"tracked"`
	Silent  int    `json:"silent"`
	Limited int    `json:"limited"`
	Dropped uint64 `json:"dropped"`
}

// TapStatus is one tap point.
type TapStatus struct {
	Point       string `json:"point"`
	Subscribers int    `json:"subscribers"`
}

// statusPageHandler serves the page at / (exactly). The page holds no
// data: its script asks /api/status, /api/sources and /api/tap for them,
// with same-origin requests. setupAPI puts it behind the token like the
// API: with api.token set, the browser gets a Basic challenge for the
// page, asks its user for the token (as the password), and then sends
// those credentials with the script's requests by itself, so the page
// never sees or stores the token.
func StatusPage() http.Handler {
	sub, err := fs.Sub(statusPage, "status")
	if err != nil {
		panic(err) // the embedded directory exists: a build error
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
		w.Header().Set("X-Frame-Options", "DENY")
		files.ServeHTTP(w, req)
	})
}
