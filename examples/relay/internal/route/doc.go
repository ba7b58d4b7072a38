// Package route builds route tables from the config: the routes' specs
// (Specs, shared with `relay test`), their steps with the enrichment
// resources they share (Enrichments), and the router whose drops and
// reductions the ledger counts (NewRouter). It imports config and
// ledger.
package route
