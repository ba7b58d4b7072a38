// Package dest owns the relay's destinations: each type's config
// section (registered with the config format), its sink (NewSink, from a
// section and a SinkEnv), and the destination the routes send to (New:
// the sink behind its delivery queue, with its counters, dead letters
// and tap point). It imports config, ledger and metrics.
package dest
