// Package version holds the relaykit module's version, defined once for
// every package that reports it.
package version

// Version is the version of the github.com/relaykit/relaykit module,
// without the leading "v". It changes with each release (CHANGELOG.md).
const Version = "0.1.0-dev"

// UserAgent is the User-Agent header value of relaykit's HTTP requests: the
// product token "relaykit/<Version>" (RFC 9110, section 10.1.5).
const UserAgent = "relaykit/" + Version
