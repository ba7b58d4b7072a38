// Package tlscert keeps the server certificate of TLS listeners without an
// operator's care: a self-signed certificate made at first start and kept,
// or certificate and key files re-read when they change, on demand (a
// SIGHUP) and when a handshake finds them changed on disk, without
// dropping a connection.
//
// A [Store] is handed to a listener through [Store.TLSConfig] (or its
// [Store.GetCertificate] in a tls.Config of one's own): each handshake
// asks it for the certificate, so a new one is served from the next
// handshake on while the connections open keep the one they were made
// with. The TLS inputs of package stream (syslog over TLS, JSON lines,
// RELP) and the HTTP and gRPC servers on a stream.NetListener (stream/hec,
// otlp) take it in their stream.Config.TLS.
//
// # Auto
//
// With [Config].Auto, New makes a self-signed certificate the first time
// it runs on a state directory: an ECDSA P-256 key, the host's names and
// addresses as subject alternative names, valid for 10 years. It writes
// them to the directory (cert.pem, and key.pem readable by its owner
// only) and every later start reuses them, so the certificate's SHA-256
// [Fingerprint] stays the same across restarts: senders that cannot
// verify a self-signed certificate against a CA pin the certificate
// instead, by that fingerprint (or by another digest of the same
// cert.pem, such as the SHA-1 fingerprints of rsyslog's x509/fingerprint
// mode: openssl x509 -noout -fingerprint -sha1 -in cert.pem). Log the
// fingerprint at start and show it where operators look (the relay's
// status page). A certificate that has
// expired is replaced at start (and the new fingerprint logged); one whose
// names no longer match the host's is kept: delete the files to make a
// new one.
//
// # Reloading
//
// With [Config].CertFile and KeyFile, New reads the pair and the Store
// serves it until the files change. [Store.Reload] reads them again at
// once (call it on SIGHUP); besides, each handshake checks the files'
// size, modification time and identity (two stat calls, next to a
// handshake's cost nothing) and reloads them when either changed. Replace
// the files by renaming new ones into place, as certbot and Kubernetes do
// (a rename is atomic), or call Reload after writing both. A new pair that
// cannot be read, or whose key does not match its certificate (the
// certificate written, the key not yet), is not taken: the Store keeps
// serving the one it has, logs the error, counts it ([Stats].ReloadErrors)
// and reports it by [Store.Err]; a later change or Reload tries again.
//
// # Concurrency
//
// A Store is safe for concurrent use by multiple goroutines; it starts
// none. A reload runs in the goroutine that asked for it (Reload's
// caller, or the handshake that found the files changed: the other
// handshakes meanwhile get the certificate in use).
package tlscert
