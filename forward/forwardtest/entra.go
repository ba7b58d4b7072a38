package forwardtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The parts of Microsoft Entra ID (the Microsoft identity platform v2.0
// endpoints) that a confidential client such as MSAL Go, and so
// azidentity.ClientSecretCredential, talks to before and while it asks for
// a token.

// openIDScopes are the OpenID Connect scopes Entra ID accepts beside a
// resource's .default scope in a client credentials request; MSAL adds all
// three to every token request.
var openIDScopes = map[string]bool{"openid": true, "profile": true, "offline_access": true, "email": true}

// dcrResources are the resource identifiers (application ID URIs) the
// token endpoint knows: Azure Monitor's, with the trailing slash that
// makes its scope "https://monitor.azure.com//.default" (the form
// Microsoft documents for the Logs Ingestion API and azlogs requests).
var dcrResources = map[string]bool{"https://monitor.azure.com/": true}

// checkScope validates a client credentials request's scope parameter as
// Entra ID does: space-separated, exactly one resource scope, which must be
// the resource's "/.default", and any OpenID Connect scopes beside it. It
// returns the OAuth error code and description, or "" if the scope is
// valid.
func checkScope(scope string) (code, desc string) {
	var resources []string
	for s := range strings.FieldsSeq(scope) {
		if !openIDScopes[s] {
			resources = append(resources, s)
		}
	}
	switch {
	case len(resources) == 0:
		return "invalid_scope", fmt.Sprintf("AADSTS1002012: The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", scope)
	case len(resources) > 1:
		return "invalid_scope", fmt.Sprintf("AADSTS28000: Provided value for the input parameter scope is not valid because it contains more than one resource. Scope %s is not valid.", scope)
	}
	resource, ok := strings.CutSuffix(resources[0], "/.default")
	if !ok {
		return "invalid_scope", fmt.Sprintf("AADSTS1002012: The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", resources[0])
	}
	if !dcrResources[resource] {
		return "invalid_resource", fmt.Sprintf("AADSTS500011: The resource principal named %s was not found in the tenant. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.", resource)
	}
	return "", ""
}

// checkScopeCode returns the error code of checkScope.
func checkScopeCode(scope string) string {
	code, _ := checkScope(scope)
	return code
}

// serveOpenIDConfiguration answers
// GET /{tenant}/v2.0/.well-known/openid-configuration with the tenant's
// OpenID Provider metadata, whose token_endpoint is this server's.
func (s *DCRServer) serveOpenIDConfiguration(w http.ResponseWriter, r *http.Request) {
	tenant := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/v2.0/.well-known/openid-configuration"), "/")
	if r.Method != http.MethodGet {
		tokenError(w, http.StatusMethodNotAllowed, "invalid_request", "AADSTS900561: The endpoint only accepts GET requests.")
		return
	}
	if tenant != s.cfg.TenantID {
		tokenError(w, http.StatusBadRequest, "invalid_tenant", fmt.Sprintf("AADSTS90002: Tenant '%s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.", tenant))
		return
	}
	base := s.AuthorityHost + "/" + tenant
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token_endpoint":                        base + "/oauth2/v2.0/token",
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "private_key_jwt", "client_secret_basic"},
		"jwks_uri":                              s.AuthorityHost + "/" + tenant + "/discovery/v2.0/keys",
		"response_modes_supported":              []string{"query", "fragment", "form_post"},
		"subject_types_supported":               []string{"pairwise"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"response_types_supported":              []string{"code", "id_token", "code id_token", "id_token token"},
		"scopes_supported":                      []string{"openid", "profile", "email", "offline_access"},
		"issuer":                                base + "/v2.0",
		"request_uri_parameter_supported":       false,
		"authorization_endpoint":                base + "/oauth2/v2.0/authorize",
		"device_authorization_endpoint":         base + "/oauth2/v2.0/devicecode",
		"end_session_endpoint":                  base + "/oauth2/v2.0/logout",
		"claims_supported":                      []string{"sub", "iss", "aud", "exp", "iat", "nbf", "tid", "ver"},
		"tenant_region_scope":                   "EU",
		"cloud_instance_name":                   "microsoftonline.com",
		"cloud_graph_host_name":                 "graph.windows.net",
		"msgraph_host":                          "graph.microsoft.com",
	})
}

// serveInstanceDiscovery answers GET /common/discovery/instance (api-version
// 1.1), the instance discovery MSAL performs unless told not to. It names
// this server as the only alias of itself and points to the tenant's OpenID
// configuration. MSAL sends this request to login.microsoftonline.com for
// any authority host it does not know, so clients of this server disable
// instance discovery (azidentity: DisableInstanceDiscovery) unless their
// transport routes that host here.
func (s *DCRServer) serveInstanceDiscovery(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("api-version") != "1.1" {
		tokenError(w, http.StatusBadRequest, "invalid_request", "AADSTS90003: The api-version query parameter is missing or invalid.")
		return
	}
	auth, err := url.Parse(q.Get("authorization_endpoint"))
	if err != nil || auth.Host == "" {
		tokenError(w, http.StatusBadRequest, "invalid_instance", "AADSTS50049: Unknown or invalid instance.")
		return
	}
	tenant, _, _ := strings.Cut(strings.TrimPrefix(auth.Path, "/"), "/")
	host := strings.TrimPrefix(strings.TrimPrefix(s.AuthorityHost, "https://"), "http://")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"tenant_discovery_endpoint": s.AuthorityHost + "/" + tenant + "/v2.0/.well-known/openid-configuration",
		"api-version":               "1.1",
		"metadata": []map[string]any{{
			"preferred_network": host,
			"preferred_cache":   host,
			"aliases":           []string{host},
		}},
	})
}
