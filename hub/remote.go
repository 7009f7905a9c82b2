package hub

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/mcpgram/mcpgram"
)

// remoteCause reads why a remote server could not be reached, where it
// is something the operator can act on, and says so in one line that
// begins with the cause and names the fix; "" where it is not (err's own
// words then say it, see oneChain).
func remoteCause(name string, err error) (mcpgram.Cause, string) {
	login := "mcpgram mcp login " + name
	switch {
	case errors.Is(err, mcpgram.ErrKeyChanged):
		return mcpgram.CauseKey, string(mcpgram.CauseKey) + ": OAUTH_KEY changed? Set it back, or run " + login
	case errors.Is(err, mcpgram.ErrNoKey):
		return mcpgram.CauseSignIn, string(mcpgram.CauseSignIn) + ", which needs OAUTH_KEY: set it (the same on every instance), then run " + login
	case errors.Is(err, mcpgram.ErrSignInRequired):
		return mcpgram.CauseSignIn, string(mcpgram.CauseSignIn) + ": run " + login
	}
	if why := notReached(err); why != "" {
		return mcpgram.CauseUnreachable, string(mcpgram.CauseUnreachable) + ": " + why
	}
	return "", ""
}

// notReached says, in a few words, why a connection to a remote server
// could not be made at all ("connection refused", "no such host
// mcp.example"); "" when err is not about that.
func notReached(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "no such host " + dns.Name
		}
		return "cannot look up " + dns.Name + ": " + dns.Err
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return ""
	}
	why := op.Err.Error()
	switch {
	case errors.Is(op.Err, syscall.ECONNREFUSED):
		why = "connection refused"
	case errors.Is(op.Err, syscall.EHOSTUNREACH):
		why = "no route to host"
	case errors.Is(op.Err, syscall.ENETUNREACH):
		why = "network is unreachable"
	case op.Timeout():
		why = "no answer to the connection"
	}
	// The address tried, which a mistyped port or host shows.
	if op.Addr != nil {
		why += " (" + op.Addr.String() + ")"
	}
	return why
}

// oneChain is an error's text with the repetitions of its chain taken
// out: the MCP client wraps a failed request twice in the same words
// ("failed to send request: failed to send request: ...") and once more in
// "transport error", which says nothing.
func oneChain(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:0]
	for _, p := range parts {
		if p == "transport error" || len(out) > 0 && out[len(out)-1] == p {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// A Remote is what signing in to a remote server needs of its entry.
type Remote struct {
	URL     string
	Headers map[string]string
	OAuth   mcpgram.OAuthConfig
}

// Remote returns the entry of the remote server name: ErrUnknownServer if
// there is none, an error if it is not remote or cannot be used.
func (h *Hub) Remote(name string) (Remote, error) {
	h.mu.Lock()
	s, ok := h.servers[name]
	h.mu.Unlock()
	if !ok {
		return Remote{}, fmt.Errorf("no server %q: %w", name, mcpgram.ErrUnknownServer)
	}
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	switch {
	case cfg.err != nil:
		return Remote{}, fmt.Errorf("server %q: invalid settings: %w", name, cfg.err)
	case cfg.typ == TypeStdio:
		return Remote{}, fmt.Errorf("server %q runs on this machine (stdio): only a remote server (streamableHttp or sse) is signed in to", name)
	}
	return Remote{URL: cfg.url, Headers: cfg.headers, OAuth: cfg.oauth}, nil
}
