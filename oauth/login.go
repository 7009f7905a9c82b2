package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// ErrNoSignIn: the server answered without asking for a sign-in, and
// publishes no resource metadata.
var ErrNoSignIn = errors.New("the server answered without asking for a sign-in")

// Login signs in to req's server now, through the Manager's interactive
// sign-in, whether or not a sign-in is kept already. It asks the server
// first (a ping without a token, with the entry's headers) for the
// challenge that says where to sign in and for what. A server reached by
// the client credentials grant, or by enterprise-managed authorization,
// needs nobody: Login gets a token with the credentials (and the ID
// token), which checks them, and keeps it in memory only (every process
// gets its own as it connects).
func (m *Manager) Login(ctx context.Context, req mcpgram.SignIn, headers map[string]string) error {
	if isMachine(req.Config) {
		ch, _, err := m.probe(ctx, req.ServerURL, headers)
		if err != nil {
			return fmt.Errorf("ask %s: %w", req.Server, err)
		}
		_, _, err = m.machineToken(ctx, Request{SignIn: req, Challenge: ch}, 0)
		return err
	}
	if err := m.canSeal(); err != nil {
		return err
	}
	m.mu.Lock()
	run := m.interactive
	m.mu.Unlock()
	if run == nil {
		return errors.New("nobody is there to sign in")
	}
	ch, asked, err := m.probe(ctx, req.ServerURL, headers)
	if err != nil {
		return fmt.Errorf("ask %s: %w", req.Server, err)
	}
	if !asked {
		u, err := checkURL(req.ServerURL)
		if err != nil {
			return err
		}
		r, err := m.reachOf(ctx, req.ServerURL)
		if err != nil {
			return err
		}
		found := false
		for _, p := range resourceMetadataURLs(u, "") {
			var prm protectedResource
			if ok, err := getJSON(ctx, m.httpFor(r), p, &prm); err == nil && ok {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: %w", req.Server, ErrNoSignIn)
		}
	}
	return run(ctx, m, Request{SignIn: req, Challenge: ch})
}

// probe sends the server a ping without a token and returns its Bearer
// challenge, if it answered 401.
func (m *Manager) probe(ctx context.Context, serverURL string, headers map[string]string) (Challenge, bool, error) {
	body := `{"jsonrpc":"2.0","id":"mcpgram-login","method":"ping"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
	if err != nil {
		return Challenge{}, false, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	resp, err := m.hc.Do(req)
	if err != nil {
		return Challenge{}, false, err
	}
	drain(resp)
	if resp.StatusCode != http.StatusUnauthorized {
		return Challenge{}, false, nil
	}
	ch, _ := ParseChallenge(resp.Header)
	return ch, true, nil
}

// Loopback is the sign-in of a command-line tool (RFC 8252 §7.3): the
// browser comes back to a port of 127.0.0.1 that it listens on for the
// one sign-in. open sends the person to the URL (starts a browser, or
// prints it). A callback with another state is answered 400 and changes
// nothing; the sign-in goes on waiting, until ctx ends.
func Loopback(open func(ctx context.Context, authURL string) error) Interactive {
	return func(ctx context.Context, m *Manager, req Request) error {
		begin := func(ctx context.Context, redirectURI string) (string, string, error) {
			return m.Begin(ctx, req, redirectURI)
		}
		finish := func(ctx context.Context, q url.Values) error {
			_, err := m.Finish(ctx, q)
			return err
		}
		return ServeLoopback(ctx, req.Server, begin, finish, open)
	}
}

// ServeLoopback runs one sign-in to server whose browser comes back to a
// port of 127.0.0.1, as Loopback does, for a sign-in begun by begin
// (given the redirect URI, it returns the authorization URL and its
// state) and finished by finish (given what the browser came back with).
func ServeLoopback(ctx context.Context, server string,
	begin func(ctx context.Context, redirectURI string) (authURL, state string, err error),
	finish func(ctx context.Context, query url.Values) error,
	open func(ctx context.Context, authURL string) error) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the sign-in's redirect: %w", err)
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	authURL, state, err := begin(ctx, redirect)
	if err != nil {
		ln.Close()
		return err
	}
	done := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "This is not the sign-in this terminal started.", http.StatusBadRequest)
			return
		}
		err := finish(ctx, q)
		msg := "Signed in to " + server + ". You may close this page."
		if err != nil {
			msg = "The sign-in to " + server + " failed: " + err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>mcpgram</title><p>%s</p>\n", html.EscapeString(msg))
		select {
		case done <- err:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := open(ctx, authURL); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("sign in to %s: %w", server, context.Cause(ctx))
	}
}
