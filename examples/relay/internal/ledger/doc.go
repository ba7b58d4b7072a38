// Package ledger owns the relay's accounting: per input and destination
// counters, drops by reason, reduction (reduced and produced per step),
// the route tables' copies, the dead-letter file's lines, and the
// Snapshot that balances them stage by stage; with the metrics of all of
// it (tables per Stats type), the keyed steps' key misses and the parse
// steps' results. It imports
// no other relay package but metrics.
package ledger
