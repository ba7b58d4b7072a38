package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/relaykit/relaykit/sources"
)

// sourcesHandler serves GET /api/sources from a tracker.
type SourcesHandler struct{ Tracker *sources.Tracker }

// sourceJSON is one source in GET /api/sources.
type SourceJSON struct {
	Source    string     `json:"source"`
	Input     string     `json:"input"`
	Events    uint64     `json:"events"`
	Bytes     uint64     `json:"bytes"`
	FirstSeen *time.Time `json:"first_seen"` // null: never sent (expected)
	LastSeen  *time.Time `json:"last_seen"`
	Rate      float64    `json:"rate"` // events per second, a 10 s moving average
	State     string     `json:"state"`
	Dropped   uint64     `json:"dropped"`
	Paced     uint64     `json:"paced"`
	Expected  bool       `json:"expected"`
}

// sourceOrders are the values of GET /api/sources?sort=.
var sourceOrders = map[string]sources.Order{
	"": sources.ByKey, "source": sources.ByKey, "events": sources.ByEvents, "bytes": sources.ByBytes,
	"rate": sources.ByRate, "dropped": sources.ByDropped, "limited": sources.ByLimited, "last_seen": sources.ByLastSeen,
}

// ServeHTTP serves GET /api/sources: a JSON array of the sources,
// filtered by ?state= (active, silent, limited, waiting) and ?input=,
// ordered by ?sort= (source, events, bytes, rate, dropped, limited,
// last_seen; all but source largest first) and cut at ?top=N.
func (s SourcesHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	qv := req.URL.Query()
	var q sources.Query
	var ok bool
	if q.State, ok = sources.ParseState(qv.Get("state")); !ok {
		http.Error(w, "state: want active, silent, limited or waiting", http.StatusBadRequest)
		return
	}
	if q.By, ok = sourceOrders[qv.Get("sort")]; !ok {
		http.Error(w, "sort: want source, events, bytes, rate, dropped, limited or last_seen", http.StatusBadRequest)
		return
	}
	if t := qv.Get("top"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			http.Error(w, "top: want a number of sources", http.StatusBadRequest)
			return
		}
		q.Top = n
	}
	q.Input = qv.Get("input")
	list := s.Tracker.Sources(nil, q)
	out := make([]SourceJSON, len(list))
	for i := range list {
		src := &list[i]
		out[i] = SourceJSON{
			Source: src.Key.String(), Input: src.Input, Events: src.Events, Bytes: src.Bytes,
			Rate: src.Rate, State: src.State.String(), Dropped: src.Dropped, Paced: src.Paced, Expected: src.Expected,
		}
		if !src.FirstSeen.IsZero() {
			f, l := src.FirstSeen.UTC(), src.LastSeen.UTC()
			out[i].FirstSeen, out[i].LastSeen = &f, &l
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
