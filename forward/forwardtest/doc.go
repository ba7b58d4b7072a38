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
// indexed, and how often, and when each request came
// ([HECServer.RequestLog]), and injects faults on request: busy (503, code
// 9), 429 with Retry-After, bad data with invalid-event-number, 413,
// connections closed mid-body, slow responses, lost acknowledgements, an
// unhealthy health endpoint, a disabled token, and throttling for a while
// ([HECServer.Throttle]: 429 or 503 with Retry-After or retry-after-ms).
//
// [DCRServer] stands in for the Azure Monitor Logs Ingestion API and its
// Entra ID token endpoint. It accepts only bearer tokens it issued, and
// checks the URL shape and api-version, the Content-Type, gzip, that the
// body is a JSON array of objects, and the 1 MiB uncompressed limit (413
// ContentLengthLimitExceeded, in the service's error shape). It answers 204
// and records rows and requests (with their arrival time). Faults can be
// injected: 429 with Retry-After or retry-after-ms, 5xx, 401, 400 with a
// message, revoked or rejected tokens, token-endpoint errors, and
// throttling for a while ([DCRServer.Throttle]). DCRServerConfig.Plan
// gives its table a plan: with [PlanAuxiliary] it refuses, as the service
// does, a TimeGenerated without exactly 6 fractional digits and dynamic
// (object or array) values.
//
// Rows of the built-in streams Microsoft-Syslog and
// Microsoft-CommonSecurityLog are checked against the published schemas of
// the Syslog and CommonSecurityLog tables ([TableColumns]): an unknown
// column or a value of the wrong type fails the request with 400, where
// the real service would accept it and drop or null the value.
//
// # Outside tests
//
// [NewHECServer] and [NewDCRServer] take a testing.TB and close the server
// when the test ends. [StartHECServer] and [StartDCRServer] take none and
// return an error instead of failing a test: a demo program, a
// docker-compose stand-in or a harness without TestMain can run them, and
// must Close them. Both serve TLS on request (the Config's TLS field) with
// httptest's certificate for 127.0.0.1; Client, ClientTLSConfig and
// Certificate give what a client needs to trust it.
//
// The DCR server's token endpoint behaves enough like Microsoft Entra ID
// for the Azure SDK for Go: it serves the tenant's OpenID configuration and
// instance discovery, and matches scopes as Entra ID does, so
// azidentity.NewClientSecretCredential with the server as its authority
// host (DisableInstanceDiscovery set) and azlogs send rows to it.
//
// # Concurrency
//
// Servers are safe for concurrent use; their accessors return copies.
package forwardtest
