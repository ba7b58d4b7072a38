// Package forwardtest provides test helpers for package forward and for any
// [relaykit.Sink]: protocol-faithful fake destinations that run on
// 127.0.0.1 (like net/http/httptest) and a conformance suite, [TestSink]
// (like testing/slogtest).
//
// # Fake destinations
//
// [HECServer] stands in for a Splunk HTTP Event Collector. It is strict: it
// rejects what the real service rejects, with the same HTTP status, code
// and text, so a sink that passes against it does not fail against Splunk
// on a detail of the protocol. It records exactly which events were
// indexed, and how often, and injects faults on request: busy (503, code
// 9), 429 with Retry-After, bad data with invalid-event-number, 413,
// connections closed mid-body, slow responses, lost acknowledgements, an
// unhealthy health endpoint, a disabled token.
//
// # Concurrency
//
// Servers are safe for concurrent use; their accessors return copies. Every
// server is closed by t.Cleanup when the test that created it ends.
package forwardtest
