// Package input owns the relay's inputs: the input registry (Kinds: one
// entry per kind of input the config format knows, each built from its
// config section and an Env, with one lifecycle: Run(ctx, hard), Close,
// Addrs, Collect), the kinds themselves (syslog UDP, syslog TCP/TLS,
// JSON lines, Kafka, RELP, HEC, OTLP, the generator), the syslog parser
// they share, and the per-source tracker. It imports config, ledger and
// metrics.
package input
