// Package api owns the operator API's HTTP side: the metrics and health
// server, the token check, the status wire model (Status, shared by the
// server and `relay top`), the status page, the wire model of GET
// /api/sources (served by sources.Handler) and the tap points' metrics.
// The service fills the model; this package imports no other relay
// package but metrics.
package api
