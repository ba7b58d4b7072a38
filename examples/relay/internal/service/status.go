package service

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
)

// status takes the snapshot GET /api/status serves.
func (r *Relay) status() api.Status {
	l := r.ledger
	snap := l.Snapshot()
	st := api.Status{Time: time.Now().UTC(), Uptime: time.Since(l.Start).Seconds(), Ready: r.healthy() == nil}
	inputs, dests := l.Inputs(), l.Dests()
	for _, in := range inputs {
		is := in.In.Stats()
		c := in.Counts()
		s := api.InputStatus{Name: in.Name, Kind: in.Kind, Received: is.Received, Bytes: c.Bytes,
			Connections: -1, ParseErrors: c.ParseErrors}
		for _, v := range is.Dropped {
			s.Dropped += v
		}
		if ls, ok := in.ListenerStats(); ok {
			s.Connections = ls.Open
			if in.Proxy != stream.ProxyOff {
				s.Proxy = &api.ProxyStatus{Mode: in.Proxy.String(), Headers: ls.ProxyHeaders, Local: ls.ProxyLocal,
					Refused: ls.ProxyNotAllowed + ls.ProxyMalformed + ls.ProxyMissing + ls.ProxyTimeout}
			}
		}
		if in.Certs != nil {
			s.TLS = certStatus(in.Certs)
		}
		st.Inputs = append(st.Inputs, s)
	}
	for _, rs := range r.routes.Load().Stats().Routes {
		s := api.RouteStatus{Name: rs.Name, Matched: rs.Matched, Out: rs.Out}
		for _, v := range rs.Dropped {
			s.Dropped += v
		}
		st.Routes = append(st.Routes, s)
	}
	for _, d := range dests {
		ds := d.Snapshot()
		s := api.DestinationStatus{Name: d.Name, Kind: d.Kind, In: ds.In, Delivered: ds.Delivered, Dropped: ds.Dropped,
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
	st.Ledger = api.LedgerStatus{Received: snap.Received, Routed: snap.Routed, Queued: snap.Queued, Delivered: snap.Delivered,
		Archived: snap.Archived, Pending: snap.Spooled, Dropped: snap.DroppedTotal(), ByReason: snap.Dropped,
		Reduced: snap.ReducedTotal(), Produced: snap.ProducedTotal()}
	if r.sources != nil {
		ss := r.sources.Tracker.Stats()
		st.Sources = &api.SourcesStatus{Tracked: ss.Keys, Silent: ss.Silent, Limited: ss.Limited, Dropped: ss.Dropped}
	}
	taps := r.taps.Stats()
	for _, n := range r.taps.Names() {
		st.Taps = append(st.Taps, api.TapStatus{Point: n, Subscribers: taps[n].Subscribers})
	}
	return st
}

// certStatus is the status of a TLS input's certificate.
func certStatus(c *tlscert.Store) *api.TLSStatus {
	leaf, cs := c.Leaf(), c.Stats()
	ts := &api.TLSStatus{SHA256: c.Fingerprint().String(), Subject: leaf.Subject.String(), Names: slices.Clone(leaf.DNSNames),
		NotAfter: leaf.NotAfter.UTC(), Reloads: cs.Reloads, ReloadErrors: cs.ReloadErrors}
	for _, ip := range leaf.IPAddresses {
		ts.Names = append(ts.Names, ip.String())
	}
	if err := c.Err(); err != nil {
		ts.Error = err.Error()
	}
	return ts
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
