package config

import "github.com/relaykit/relaykit/delivery"

// Spool modes and spool-full policies of a destination (DestSpoolConfig).
const (
	SpoolOnFailure = "on_failure" // memory first; the spool takes what fails
	SpoolAlways    = "always"     // write-ahead: every batch is spooled before Send returns

	FullBlock      = "block"       // the worker waits for room (TCP backpressure)
	FullDropOldest = "drop_oldest" // the oldest spooled batches make room
	FullDropNewest = "drop_newest" // the new batch is dropped
)

var (
	SpoolModes = map[string]delivery.Mode{SpoolOnFailure: delivery.OnFailure, SpoolAlways: delivery.WriteAhead}
	SpoolFulls = map[string]delivery.FullPolicy{FullBlock: delivery.Block, FullDropOldest: delivery.DropOldest, FullDropNewest: delivery.DropNewest}
)
