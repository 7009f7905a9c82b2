package oauth

import (
	"encoding/json"
	"net/http"
)

// ClientMetadata serves mcpgram's Client ID Metadata Document, whose URL
// (clientID) is mcpgram's client id with authorization servers that take
// one: who mcpgram is, and where a sign-in comes back to. The terminal's
// sign-in comes back to a port of 127.0.0.1, which authorization servers
// take on any port (RFC 8252 §7.3).
func ClientMetadata(clientID, publicURL string) http.Handler {
	doc, _ := json.Marshal(map[string]any{
		"client_id":                  clientID,
		"client_name":                "mcpgram",
		"client_uri":                 publicURL,
		"redirect_uris":              []string{"http://127.0.0.1/callback"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": authNone,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(doc)
	})
}
