package forward

import (
	"net/http"

	"github.com/relaykit/relaykit/internal/version"
)

// UserAgent is the User-Agent header of every HTTP request this package
// sends: HEC data, acknowledgement and health requests, Logs Ingestion API
// requests and Entra ID token requests. It names the library and its
// version ("relaykit/<version>"), so that Splunk and Azure support can
// identify the client, as both recommend for HEC and Azure Monitor clients.
const UserAgent = version.UserAgent

// setUserAgent sets the User-Agent header of a request built by this package.
func setUserAgent(req *http.Request) {
	req.Header.Set("User-Agent", UserAgent)
}

// userAgentClient returns a copy of c whose requests carry [UserAgent] unless
// they set a User-Agent themselves, for requests built by other code (the
// oauth2 token request). c itself is not modified.
func userAgentClient(c *http.Client) *http.Client {
	cc := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = userAgentTransport{base: base}
	return &cc
}

type userAgentTransport struct{ base http.RoundTripper }

// RoundTrip sends a copy of req with the User-Agent set (a RoundTripper must
// not modify its request).
func (t userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") != "" {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	setUserAgent(r)
	return t.base.RoundTrip(r)
}
