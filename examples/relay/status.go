package main

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"slices"
	"sort"
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

// status takes the snapshot GET /api/status serves.
func (r *Relay) status() Status {
	l := r.ledger
	snap := l.Snapshot()
	st := Status{Time: time.Now().UTC(), Uptime: time.Since(l.start).Seconds(), Ready: r.healthy() == nil}
	l.mu.Lock()
	inputs, dests := slices.Clone(l.inputs), slices.Clone(l.dests)
	l.mu.Unlock()
	for _, in := range inputs {
		is := in.in.Stats()
		s := InputStatus{Name: in.name, Kind: in.kind, Received: is.Received, Bytes: in.bytes.Load(),
			Connections: -1, ParseErrors: in.parseErrors.Load()}
		for _, v := range is.Dropped {
			s.Dropped += v
		}
		if in.listener != nil {
			s.Connections = in.listener.Stats().Open
		}
		st.Inputs = append(st.Inputs, s)
	}
	for _, rs := range r.routes.Load().Stats().Routes {
		s := RouteStatus{Name: rs.Name, Matched: rs.Matched, Out: rs.Out}
		for _, v := range rs.Dropped {
			s.Dropped += v
		}
		st.Routes = append(st.Routes, s)
	}
	for _, d := range dests {
		ds := d.snapshot()
		s := DestinationStatus{Name: d.name, Kind: d.kind, In: ds.In, Delivered: ds.Delivered, Dropped: ds.Dropped,
			Pending: ds.Pending, Backlog: ds.Backlog, SpoolBytes: ds.BacklogBytes, State: "ok"}
		switch {
		case ds.DiskFailing:
			s.State = "disk_failing"
		case !ds.Healthy:
			s.State = "failing"
		case ds.Backlog > 0:
			s.State = "backlog"
		}
		st.Destinations = append(st.Destinations, s)
	}
	sort.Slice(st.Destinations, func(i, j int) bool { return st.Destinations[i].Name < st.Destinations[j].Name })
	st.Ledger = LedgerStatus{Received: snap.Received, Routed: snap.Routed, Queued: snap.Queued, Delivered: snap.Delivered,
		Archived: snap.Archived, Pending: snap.Spooled, Dropped: snap.DroppedTotal(), ByReason: snap.Dropped,
		Reduced: snap.ReducedTotal(), Produced: snap.ProducedTotal()}
	if r.sources != nil {
		ss := r.sources.tr.Stats()
		st.Sources = &SourcesStatus{Tracked: ss.Keys, Silent: ss.Silent, Limited: ss.Limited, Dropped: ss.Dropped}
	}
	taps := r.taps.Stats()
	for _, n := range r.taps.Names() {
		st.Taps = append(st.Taps, TapStatus{Point: n, Subscribers: taps[n].Subscribers})
	}
	return st
}

// serveStatus serves GET /api/status.
func (r *Relay) serveStatus(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(r.status())
}

// statusPageHandler serves the page at / (exactly). The page holds no
// data: its script asks /api/status, /api/sources and /api/tap for them,
// with same-origin requests. setupAPI puts it behind the token like the
// API: with api.token set, the browser gets a Basic challenge for the
// page, asks its user for the token (as the password), and then sends
// those credentials with the script's requests by itself, so the page
// never sees or stores the token.
func statusPageHandler() http.Handler {
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
