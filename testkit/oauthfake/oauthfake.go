// Package oauthfake is a protected MCP server and its authorization
// server, on one httptest server on 127.0.0.1, for the tests of signing
// in (MCP authorization): discovery, dynamic registration, PKCE, the
// resource parameter, scopes and step-up, refresh with rotation, and
// counters of what clients did. Browse stands in for the browser. It can
// also be a hostile remote server, over HTTPS under a made-up name
// (StartTLS): its metadata then names what the test says.
package oauthfake

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A Server is the protected MCP server (at URL()+"/mcp", with the tool
// whoami, which says whose token called it) and its authorization server
// (at URL()). AddMachine registers clients of the client credentials
// grant.
type Server struct {
	srv *httptest.Server
	url string

	mu sync.Mutex
	// ExpiresIn is the lifetime of the access tokens it gives, in seconds.
	ExpiresIn int
	// Subject is who signs in at the authorization endpoint.
	Subject string
	codes   map[string]codeGrant
	access  map[string]tokenInfo
	refresh map[string]tokenInfo // live refresh tokens
	spent   map[string]bool      // refresh tokens used once
	clients map[string]string    // client id: redirect URI
	issued  []string
	counts  Counts
	rev     revocations // see revoke.go
	// See credentials.go.
	machines map[string]Machine
	refusals []string
	jtis     map[string]bool
	// See enterprise.go.
	idps   map[string]crypto.PublicKey
	bearer []Posted
	asked  []string // the scope of each authorization request

	// ResourceMetadata and ServerMetadata, when set, change the resource's
	// and the authorization server's metadata before they are served.
	ResourceMetadata, ServerMetadata func(doc map[string]any)
	// TokenRedirect, when set, is where the token endpoint sends every
	// request, with a 307 (which keeps the method and the body).
	TokenRedirect string

	mcp *server.MCPServer
}

// Counts are what clients did.
type Counts struct {
	Registrations, Authorizations, CodeExchanges, Refreshes int
	// RefreshReuses counts refresh tokens presented after they were
	// spent: a client that lets two processes refresh at once.
	RefreshReuses int
	// Unauthorized counts MCP requests answered 401.
	Unauthorized int
	// ClientCredentials counts tokens given by the client credentials
	// grant (see AddMachine).
	ClientCredentials int
	// JWTBearer counts tokens given for an ID-JAG (see TrustIdP).
	JWTBearer int
}

type codeGrant struct {
	client, redirect, challenge, resource, subject string
	scopes                                         []string
}

type tokenInfo struct {
	subject string
	scopes  []string
}

// Start starts a Server, stopped when the test ends. Tokens last an
// hour unless ExpiresIn is changed.
func Start(t testing.TB) *Server {
	t.Helper()
	s := newServer()
	s.srv = httptest.NewServer(s.routes())
	s.url = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// StartTLS starts a Server over HTTPS on listen (such as "127.0.0.2:0"),
// whose URLs name host instead of its address: a name under example.com,
// which httptest's certificate covers, that the test's resolver maps to
// listen's address. Client trusts its certificate.
func StartTLS(t testing.TB, listen, host string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer()
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.routes()}}
	s.srv.StartTLS()
	s.url = fmt.Sprintf("https://%s:%d", host, ln.Addr().(*net.TCPAddr).Port)
	t.Cleanup(s.srv.Close)
	return s
}

// Client is an HTTP client that trusts the server's certificate.
func (s *Server) Client() *http.Client { return s.srv.Client() }

func newServer() *Server {
	return &Server{ExpiresIn: 3600, Subject: "operator", codes: map[string]codeGrant{}, access: map[string]tokenInfo{},
		refresh: map[string]tokenInfo{}, spent: map[string]bool{}, clients: map[string]string{},
		machines: map[string]Machine{}, jtis: map[string]bool{}, idps: map[string]crypto.PublicKey{}}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	mux.Handle("/mcp", s.protect(s.mcpHandler()))
	return mux
}

// URL is the authorization server's issuer; the MCP server is at
// URL()+"/mcp".
func (s *Server) URL() string { return s.url }

// Counts returns what clients did so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// AskedScopes returns the scope parameter of each authorization request
// so far ("" for none), in order.
func (s *Server) AskedScopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// Tokens returns every access and refresh token the server gave, live
// or not, for a test to look for where they must not be.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// ExpireAccessTokens ends every access token given so far, as a server
// does when their time is up: requests with them get 401.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// AddAppTool adds whoami_panel to the MCP server's tools: whoami for an
// MCP App's own panel (visibility ["app"]), which the model must never be
// shown.
func (s *Server) AddAppTool() {
	panel := mcp.NewTool("whoami_panel", mcp.WithDescription("who the token is of, for the app's panel"))
	panel.Meta = &mcp.Meta{AdditionalFields: map[string]any{"ui": map[string]any{"resourceUri": "ui://protected/panel.html", "visibility": []any{"app"}}}}
	s.mcp.AddTool(panel, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		info, _ := ctx.Value(subjectKey{}).(tokenInfo)
		return mcp.NewToolResultText(info.subject), nil
	})
}

// Set changes the server's settings under its lock.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	doc := map[string]any{"resource": s.URL() + "/mcp", "authorization_servers": []string{s.URL()}, "scopes_supported": []string{"read"}}
	s.mu.Lock()
	if s.ResourceMetadata != nil {
		s.ResourceMetadata(doc)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, doc)
}

func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	doc := s.withRevocation(map[string]any{
		"issuer": s.URL(), "authorization_endpoint": s.URL() + "/authorize", "token_endpoint": s.URL() + "/token",
		"registration_endpoint": s.URL() + "/register", "response_types_supported": []string{"code"},
		"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		"authorization_response_iss_parameter_supported": true,
	})
	s.mu.Lock()
	if len(s.machines) > 0 {
		doc["grant_types_supported"] = []string{"authorization_code", "refresh_token", "client_credentials", grantJWTBearer}
		doc["token_endpoint_auth_methods_supported"] = []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"}
		doc["token_endpoint_auth_signing_alg_values_supported"] = []string{"ES256", "ES384", "ES512", "RS256", "EdDSA"}
	}
	if s.ServerMetadata != nil {
		s.ServerMetadata(doc)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, doc)
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) != 1 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Registrations++
	id := "client-" + random()
	s.clients[id] = req.RedirectURIs[0]
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "token_endpoint_auth_method": "none"})
}

// authorize approves at once, as the user would, and sends the browser
// back with a code.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	redirect, ok := s.clients[q.Get("client_id")]
	if !ok || redirect != q.Get("redirect_uri") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != s.URL()+"/mcp" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	s.counts.Authorizations++
	s.asked = append(s.asked, q.Get("scope"))
	code := random()
	subject := s.Subject
	if a := q.Get(AccountParam); a != "" {
		subject = a // the account the person chose on the sign-in page
	}
	s.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource"),
		subject: subject, scopes: strings.Fields(q.Get("scope"))}
	back, _ := url.Parse(redirect)
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", s.URL())
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	redirect := s.TokenRedirect
	s.mu.Unlock()
	if redirect != "" {
		http.Redirect(w, r, redirect, http.StatusTemporaryRedirect)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	var info tokenInfo
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri") || g.resource != f.Get("resource") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		s.counts.CodeExchanges++
		info = tokenInfo{subject: g.subject, scopes: g.scopes}
	case "refresh_token":
		rt := f.Get("refresh_token")
		if s.spent[rt] {
			s.counts.RefreshReuses++
		}
		i, ok := s.refresh[rt]
		if !ok || f.Get("resource") != s.URL()+"/mcp" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, rt)
		s.spent[rt] = true
		s.counts.Refreshes++
		info = i
	case "client_credentials":
		var why string
		if info, why = s.clientCredentials(r, f); why != "" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": why})
			return
		}
		s.giveMachineToken(w, info)
		return
	case grantJWTBearer:
		s.jwtBearer(w, r, f) // see enterprise.go
		return
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := "at-"+random(), "rt-"+random()
	s.access[at], s.refresh[rt] = info, info
	s.issued = append(s.issued, at, rt)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": s.ExpiresIn, "scope": strings.Join(info.scopes, " ")})
}

// giveMachineToken answers a token request of a machine grant with an
// access token for info, and no refresh token; s.mu is held.
func (s *Server) giveMachineToken(w http.ResponseWriter, info tokenInfo) {
	at := "at-" + random()
	s.access[at] = info
	s.issued = append(s.issued, at)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": s.ExpiresIn,
		"scope": strings.Join(info.scopes, " ")})
}

type subjectKey struct{}

// protect lets through requests with a live access token, and answers
// the others 401 with the challenge that leads to the sign-in.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		info, ok := s.access[tok]
		if !ok {
			s.counts.Unauthorized++
		}
		s.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="read"`, s.URL()))
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), subjectKey{}, info)))
	})
}

func (s *Server) mcpHandler() http.Handler {
	m := server.NewMCPServer("protected", "1")
	m.AddTool(mcp.NewTool("whoami", mcp.WithDescription("who the token is of")), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		info, _ := ctx.Value(subjectKey{}).(tokenInfo)
		return mcp.NewToolResultText(info.subject), nil
	})
	s.mcp = m
	return server.NewStreamableHTTPServer(m, server.WithStateLess(true), server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, subjectKey{}, r.Context().Value(subjectKey{}))
	}))
}

// Browse is the browser of a sign-in: it opens the authorization URL and
// follows the authorization server's redirect back to the client.
func Browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sign-in's pages answered %s", resp.Status)
	}
	return nil
}
