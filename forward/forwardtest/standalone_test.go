package forwardtest_test

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// TestStartServersWithoutTB starts both servers as a program would, plain
// and TLS, and checks that a client trusting only the exported
// configuration reaches them, that a client without it is refused, and
// that Close is idempotent.
func TestStartServersWithoutTB(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "tls"}[useTLS]
		t.Run(name, func(t *testing.T) {
			hec, err := forwardtest.StartHECServer(forwardtest.HECServerConfig{TLS: useTLS})
			require.NoError(t, err)
			defer hec.Close()
			dcr, err := forwardtest.StartDCRServer(forwardtest.DCRServerConfig{TLS: useTLS})
			require.NoError(t, err)
			defer dcr.Close()

			scheme := "http://127.0.0.1:"
			if useTLS {
				scheme = "https://127.0.0.1:"
			}
			assert.True(t, strings.HasPrefix(hec.URL, scheme), hec.URL)
			assert.True(t, strings.HasPrefix(dcr.URL, scheme), dcr.URL)
			assert.Equal(t, dcr.URL, dcr.AuthorityHost)
			assert.Equal(t, useTLS, hec.ClientTLSConfig() != nil)
			assert.Equal(t, useTLS, dcr.ClientTLSConfig() != nil)
			assert.Equal(t, useTLS, dcr.Certificate() != nil)

			client := http.DefaultClient
			if useTLS {
				client = &http.Client{Transport: &http.Transport{TLSClientConfig: hec.ClientTLSConfig()}}
				defer client.CloseIdleConnections()
				// Without the exported trust, TLS fails.
				resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}).
					Get(hec.URL + "/services/collector/health")
				if err == nil {
					resp.Body.Close()
				}
				require.Error(t, err)
				assert.ErrorContains(t, err, "certificate")
			}
			resp, err := client.Get(hec.URL + "/services/collector/health")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)

			dcrClient := dcr.Client()
			defer dcrClient.CloseIdleConnections()
			c := dcr.Config()
			resp, err = dcrClient.PostForm(dcr.AuthorityHost+"/"+c.TenantID+"/oauth2/v2.0/token", url.Values{
				"grant_type": {"client_credentials"}, "client_id": {c.ClientID},
				"client_secret": {c.ClientSecret}, "scope": {forwardtest.DCRScope},
			})
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)

			hec.Close()
			dcr.Close()
			hec.Close()
			dcr.Close()
		})
	}
}

// TestDCRTokenScopes matches token request scopes the way Entra ID does
// for the client credentials grant.
func TestDCRTokenScopes(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	tests := []struct {
		scope  string
		status int
		code   string
	}{
		{forwardtest.DCRScope, 200, ""},
		{forwardtest.DCRScope + " openid profile offline_access", 200, ""}, // what MSAL sends
		{"openid " + forwardtest.DCRScope, 200, ""},
		{"  " + forwardtest.DCRScope + "   offline_access ", 200, ""},
		{"", 400, "invalid_scope"},
		{"openid profile", 400, "invalid_scope"},
		{"https://monitor.azure.com//user_impersonation", 400, "invalid_scope"},
		{forwardtest.DCRScope + " https://storage.azure.com/.default", 400, "invalid_scope"},
		{"https://management.azure.com//.default", 400, "invalid_resource"},
		{"https://monitor.azure.com/x/.default", 400, "invalid_resource"},
	}
	for _, tt := range tests {
		t.Run(tt.scope, func(t *testing.T) {
			resp, err := http.PostForm(srv.AuthorityHost+"/"+c.TenantID+"/oauth2/v2.0/token", url.Values{
				"grant_type": {"client_credentials"}, "client_id": {c.ClientID},
				"client_secret": {c.ClientSecret}, "scope": {tt.scope},
			})
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			var body struct {
				Error       string `json:"error"`
				AccessToken string `json:"access_token"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			assert.Equal(t, tt.code, body.Error)
			assert.Equal(t, tt.status == 200, body.AccessToken != "")
		})
	}
}

// TestDCROpenIDMetadata: the tenant's OpenID configuration and instance
// discovery point to the server's own endpoints, and an unknown tenant is
// refused as Entra ID refuses it.
func TestDCROpenIDMetadata(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{TLS: true})
	client := srv.Client()
	c := srv.Config()
	base := srv.AuthorityHost + "/" + c.TenantID

	getJSON := func(u string) (int, map[string]any) {
		t.Helper()
		resp, err := client.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		return resp.StatusCode, m
	}
	status, m := getJSON(base + "/v2.0/.well-known/openid-configuration")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, base+"/oauth2/v2.0/token", m["token_endpoint"])
	assert.Equal(t, base+"/oauth2/v2.0/authorize", m["authorization_endpoint"])
	assert.Equal(t, base+"/v2.0", m["issuer"])

	status, m = getJSON(srv.AuthorityHost + "/someone-else/v2.0/.well-known/openid-configuration")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_tenant", m["error"])

	q := url.Values{"api-version": {"1.1"}, "authorization_endpoint": {base + "/oauth2/v2.0/authorize"}}
	status, m = getJSON(srv.AuthorityHost + "/common/discovery/instance?" + q.Encode())
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, base+"/v2.0/.well-known/openid-configuration", m["tenant_discovery_endpoint"])
	host := strings.TrimPrefix(srv.AuthorityHost, "https://")
	assert.Equal(t, []any{map[string]any{"preferred_network": host, "preferred_cache": host, "aliases": []any{host}}}, m["metadata"])

	status, _ = getJSON(srv.AuthorityHost + "/common/discovery/instance")
	assert.Equal(t, http.StatusBadRequest, status)
}
