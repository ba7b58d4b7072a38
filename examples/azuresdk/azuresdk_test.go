package azuresdk_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/monitor/ingestion/azlogs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// onlyTo is the SDK clients' transport: it sends through the server's
// client (which trusts its certificate) and refuses any other host, so a
// request the SDK would make to Azure fails the test instead of leaving
// the machine.
type onlyTo struct {
	c    *http.Client
	host string
}

func (o onlyTo) Do(req *http.Request) (*http.Response, error) {
	if req.URL.Host != o.host {
		return nil, fmt.Errorf("test transport: request to %s refused: only %s is allowed", req.URL.Host, o.host)
	}
	return o.c.Do(req)
}

// clients returns an azlogs client for srv authenticated by a
// ClientSecretCredential with secret, both sending only to srv.
func clients(t *testing.T, srv *forwardtest.DCRServer, secret string, instanceDiscovery bool) *azlogs.Client {
	t.Helper()
	hc := srv.Client()
	t.Cleanup(hc.CloseIdleConnections)
	transport := onlyTo{c: hc, host: srv.URL[len("https://"):]}
	c := srv.Config()
	cred, err := azidentity.NewClientSecretCredential(c.TenantID, c.ClientID, secret, &azidentity.ClientSecretCredentialOptions{
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: srv.AuthorityHost + "/"},
			Transport: transport,
			Retry:     policy.RetryOptions{MaxRetries: -1},
		},
		// MSAL asks login.microsoftonline.com to validate a host it does
		// not know; a private authority (Azure Stack, this server) turns
		// that off, as Microsoft documents.
		DisableInstanceDiscovery: !instanceDiscovery,
	})
	require.NoError(t, err)
	client, err := azlogs.NewClient(srv.URL, cred, &azlogs.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: transport,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	require.NoError(t, err)
	return client
}

// TestAzureSDKUploadsToDCRServer sends rows with the Azure SDK's own
// credential and Logs Ingestion client, plain and gzip, and reads them
// back from the server.
func TestAzureSDKUploadsToDCRServer(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{TLS: true})
	c := srv.Config()
	client := clients(t, srv, c.ClientSecret, false)

	first := []map[string]any{
		{"TimeGenerated": "2026-01-02T03:04:05Z", "Computer": "web-1", "RawData": "Failed password for root"},
		{"TimeGenerated": "2026-01-02T03:04:06Z", "Computer": "web-2", "RawData": "Accepted password for alice"},
	}
	body, err := json.Marshal(first)
	require.NoError(t, err)
	_, err = client.Upload(t.Context(), c.DCRImmutableID, c.Stream, body, nil)
	require.NoError(t, err)

	second := []map[string]any{{"TimeGenerated": "2026-01-02T03:04:07Z", "Computer": "db-1", "RawData": "checkpoint"}}
	body, err = json.Marshal(second)
	require.NoError(t, err)
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	_, _ = zw.Write(body)
	require.NoError(t, zw.Close())
	enc := "gzip"
	_, err = client.Upload(t.Context(), c.DCRImmutableID, c.Stream, zbuf.Bytes(), &azlogs.UploadOptions{ContentEncoding: &enc})
	require.NoError(t, err)

	got := srv.Rows()
	require.Len(t, got, 3)
	for i, want := range append(first, second...) {
		for k, v := range want {
			assert.Equal(t, v, got[i][k], "row %d %s", i, k)
		}
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.False(t, reqs[0].Gzip)
	assert.True(t, reqs[1].Gzip)
	assert.Equal(t, reqs[0].Token, reqs[1].Token, "the credential caches its token")
	assert.Equal(t, 1, srv.TokenRequests())

	// A wrong rule is the service's 404, surfaced by the SDK.
	_, err = client.Upload(t.Context(), "dcr-unknown", c.Stream, []byte(`[{}]`), nil)
	var re *azcore.ResponseError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, http.StatusNotFound, re.StatusCode)
	assert.Equal(t, "NotFound", re.ErrorCode)
}

// TestAzureSDKAuthFailures: a wrong secret is refused by the token
// endpoint as Entra ID refuses it, and leaving instance discovery on sends
// MSAL to login.microsoftonline.com (refused here), which is why the
// server's clients turn it off.
func TestAzureSDKAuthFailures(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{TLS: true})
	c := srv.Config()

	_, err := clients(t, srv, "wrong-secret", false).Upload(t.Context(), c.DCRImmutableID, c.Stream, []byte(`[{"a":1}]`), nil)
	var afe *azidentity.AuthenticationFailedError
	require.ErrorAs(t, err, &afe)
	assert.ErrorContains(t, err, "AADSTS7000215")
	assert.NotContains(t, err.Error(), "wrong-secret", "the secret is not echoed")

	_, err = clients(t, srv, c.ClientSecret, true).Upload(t.Context(), c.DCRImmutableID, c.Stream, []byte(`[{"a":1}]`), nil)
	require.Error(t, err)
	assert.ErrorContains(t, err, "login.microsoftonline.com")
	assert.Empty(t, srv.Rows())
	assert.Equal(t, 1, srv.TokenRequests(), "only the wrong secret's token request reached the server")
}

// TestAzureSDKRefusesPlainHTTP is the reason the server serves TLS: the SDK
// refuses an authority host without https.
func TestAzureSDKRefusesPlainHTTP(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	_, err := azidentity.NewClientSecretCredential(c.TenantID, c.ClientID, c.ClientSecret, &azidentity.ClientSecretCredentialOptions{
		ClientOptions:            azcore.ClientOptions{Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: srv.AuthorityHost + "/"}},
		DisableInstanceDiscovery: true,
	})
	assert.ErrorContains(t, err, "https")
}
