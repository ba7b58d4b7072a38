package api

import (
	"time"
)

// SourceJSON is one source in GET /api/sources (served by
// sources.Handler), as the status page and API clients read it.
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
