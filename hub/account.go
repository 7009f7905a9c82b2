// Accounts: a remote server whose entry says "oauth": {"account": "user"}
// acts as each user's own account. Each user's calls go through an MCP
// session of that user, whose HTTP requests carry that user's token and
// nobody else's: one session per user, opened at the user's first call,
// closed when idle for Options.SessionIdle and when the server stops. A
// user not yet connected is asked to connect (the Connector), and the
// call waits for it and then runs.
//
// The server's tools are learned from the first session a user opens, and
// the catalog keeps them until the server stops. Until then the catalog
// lists one tool of the hub's own, connect (ConnectTool), that connects
// the calling user and lists the server's tools, so that the model has
// something to call that leads to the first connection.

package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
)

// ConnectTool is the tool a per-user server lists until its own tools are
// known.
const ConnectTool = "connect"

// DefaultSessionIdle is how long a user's session of a per-user server
// stays open after its last call.
const DefaultSessionIdle = 10 * time.Minute

// Errors of per-user servers.
var (
	// ErrNotConnected: the caller has not connected their account to the
	// per-user server (they declined, or did not in time).
	ErrNotConnected = errors.New("not connected")
	// errNoUser: a call of a per-user server made for nobody.
	errNoUser = errors.New("this server acts as each user's own account, and the call is made for no user")
)

// runAccounts is the run loop of a per-user server: it lists the server
// as running with the connect tool, which needs no approval (it connects
// nothing without the user's sign-in on its own card), and on stop
// closes every session.
func (s *server) runAccounts(ctx context.Context, ready func()) error {
	idle := s.hub.opts.SessionIdle
	u := newAccounts(idle)
	s.mu.Lock()
	s.users = u
	s.status, s.errMsg, s.last.exitCode, s.last.lastStderr = mcpgram.StatusRunning, "", -1, ""
	s.cat = snapshot{
		about:     "Each user connects their own account; its tools are listed once someone has.",
		tools:     []mcpgram.Tool{connectTool(s.name)},
		synthetic: true,
	}
	s.mu.Unlock()
	s.hub.changed()
	s.log.Info("server runs for each user's own account")
	ready()
	<-ctx.Done()
	u.close()
	s.mu.Lock()
	s.users = nil
	s.mu.Unlock()
	return nil
}

func connectTool(server string) mcpgram.Tool {
	return mcpgram.Tool{
		Name:        ConnectTool,
		Title:       "Connect your account",
		Description: fmt.Sprintf("Connects the user's own account to %s (the user is asked to sign in), then lists the server's tools. Each user connects their own account.", server),
		InputSchema: json.RawMessage(`{"type":"object"}`),
		PerUser:     true,
	}
}

// Sessions counts the open sessions of users of server, a per-user server.
func (h *Hub) Sessions(server string) int {
	if u := h.accountsOf(server); u != nil {
		return u.count()
	}
	return 0
}

// accountsOf is the sessions of server by user, nil where it is no
// per-user server (or none at all).
func (h *Hub) accountsOf(server string) *accounts {
	s, err := h.server(server)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users
}

// requestAs is request on the caller's own session of a per-user server;
// a sign-in the session needs mid-call is asked for once, and the request
// sent again.
func (s *server) requestAs(ctx context.Context, method string, params map[string]any, caller mcpgram.Caller, tool, uri string) (json.RawMessage, error) {
	for again := false; ; again = true {
		ss, u, cfg, err := s.sessionFor(ctx, caller)
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if method == string(mcp.MethodToolsCall) && tool == ConnectTool && !s.hasTool(ConnectTool, ss) {
			raw, err = s.connected()
		} else {
			raw, err = s.requestOn(ctx, ss.c, cfg, method, params, caller, tool, uri)
		}
		u.release(ss)
		if err == nil || !errors.Is(err, mcpgram.ErrSignInRequired) || again {
			return raw, err
		}
		// The sign-in ended (revoked, or its refresh refused): ask again.
		ss.c.markLost()
		if err := s.connectAccount(ctx, caller, cfg); err != nil {
			return nil, err
		}
	}
}

// hasTool reports whether the server's own tools, as ss knows them,
// include name.
func (s *server) hasTool(name string, ss *session) bool {
	ss.c.toolsMu.Lock()
	defer ss.c.toolsMu.Unlock()
	_, ok := ss.c.tools[name]
	return ok
}

// connected is the result of the connect tool: the server's tools, those
// the model may call, as it is the model that reads it.
func (s *server) connected() (json.RawMessage, error) {
	s.mu.Lock()
	var names []string
	for _, t := range s.cat.tools {
		if t.VisibleTo(mcpgram.AudienceModel) {
			names = append(names, t.Name)
		}
	}
	s.mu.Unlock()
	text := fmt.Sprintf("Connected to %s with the user's own account. Its tools: %v.", s.name, names)
	return json.Marshal(mcp.NewToolResultText(text))
}

// sessionFor returns the caller's session, counted busy, opening it, and
// asking the caller to connect first if need be.
func (s *server) sessionFor(ctx context.Context, caller mcpgram.Caller) (*session, *accounts, config, error) {
	s.mu.Lock()
	u, cfg := s.users, s.cfg
	s.mu.Unlock()
	if u == nil {
		return nil, nil, cfg, fmt.Errorf("%w (%s)", mcpgram.ErrNotRunning, s.info().Status)
	}
	if caller.UserID == "" {
		return nil, nil, cfg, errNoUser
	}
	unlock, err := u.lock(ctx, caller.UserID)
	if err != nil {
		return nil, nil, cfg, err
	}
	defer unlock()
	if ss := u.take(caller.UserID); ss != nil {
		return ss, u, cfg, nil
	}
	for asked := false; ; asked = true {
		c, err := s.open(ctx, u, cfg, caller.UserID)
		if err == nil {
			ss, ok := u.add(caller.UserID, c)
			if !ok {
				_ = s.shutdown(c)
				return nil, nil, cfg, fmt.Errorf("%w (stopped)", mcpgram.ErrNotRunning)
			}
			go s.keep(u, caller.UserID, ss)
			return ss, u, cfg, nil
		}
		if !errors.Is(err, mcpgram.ErrSignInRequired) || asked {
			return nil, nil, cfg, err
		}
		if err := s.connectAccount(ctx, caller, cfg); err != nil {
			return nil, nil, cfg, err
		}
	}
}

// connectAccount asks the caller to connect their account, and returns
// nil once they have.
func (s *server) connectAccount(ctx context.Context, caller mcpgram.Caller, cfg config) error {
	ask, auth := s.hub.ask.Connector, s.hub.opts.Auth
	if ask == nil || auth == nil {
		return fmt.Errorf("%w: %s acts as each user's own account, and nobody can be asked to connect here", ErrNotConnected, s.name)
	}
	conn := mcpgram.Connection{Caller: caller, Server: s.name, URL: cfg.url,
		BeginFunc: func(ctx context.Context, redirectURI, tag string) (string, error) {
			req := mcpgram.SignIn{Server: s.name, UserID: caller.UserID, ServerURL: cfg.url, Config: cfg.oauth, Tag: tag}
			return auth.BeginSignIn(ctx, req, cfg.headers, redirectURI)
		}}
	s.log.Info("asking a user to connect their account", "user", caller.UserID)
	action, err := ask.Connect(ctx, conn)
	switch {
	case err != nil:
		return fmt.Errorf("connect to %s: %w", s.name, err)
	case action == mcpgram.ElicitAccept:
		s.log.Info("a user connected their account", "user", caller.UserID)
		return nil
	case action == mcpgram.ElicitDecline:
		return fmt.Errorf("%w: the user declined to connect their account to %s", ErrNotConnected, s.name)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: cancelled: the user did not connect their account to %s", ErrNotConnected, s.name)
}

// open opens user's session: the connection, its initialize, and the
// catalog, read from it when none was yet.
func (s *server) open(ctx context.Context, u *accounts, cfg config, user string) (*conn, error) {
	c := newConn(user)
	ictx, cancel := context.WithTimeoutCause(ctx, cfg.timeout, errTimeout)
	defer cancel()
	if err := s.dial(ictx, c, cfg); err != nil {
		return nil, err
	}
	c.started = time.Now()
	s.listen(c)
	err := s.initialize(ictx, c, cfg)
	if err == nil {
		err = s.learn(ictx, u, c)
	}
	if err != nil {
		_ = s.shutdown(c)
		if context.Cause(ictx) == errTimeout {
			return nil, fmt.Errorf("no answer within %s", seconds(cfg.timeout))
		}
		return nil, err
	}
	return c, nil
}

// learn reads the catalog from c if none was read yet, and gives c the
// tools' definitions.
func (s *server) learn(ctx context.Context, u *accounts, c *conn) error {
	u.mu.Lock()
	learned, defs := u.learned, u.defs
	u.mu.Unlock()
	if learned {
		c.toolsMu.Lock()
		c.tools = defs
		c.toolsMu.Unlock()
		return nil
	}
	if err := s.readCatalog(ctx, c); err != nil {
		return err
	}
	s.mu.Lock()
	s.cat.synthetic = false
	s.mu.Unlock()
	c.toolsMu.Lock()
	defs = c.tools
	c.toolsMu.Unlock()
	u.mu.Lock()
	u.learned, u.defs = true, defs
	u.mu.Unlock()
	return nil
}

// keep serves user's session ss until it is stopped, lost, or idle for
// long enough, and then shuts it down.
func (s *server) keep(u *accounts, user string, ss *session) {
	defer u.wg.Done()
	t := time.NewTimer(u.idle)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-ss.stop:
			done = true
		case <-ss.c.lost:
			done = true
		case <-ss.c.refresh:
			ctx, cancel := context.WithTimeout(context.Background(), s.cfgTimeout())
			if err := s.readCatalog(ctx, ss.c); err != nil {
				s.log.Warn("refresh catalog", "err", err)
			}
			cancel()
		case <-t.C:
			var left time.Duration
			done, left = u.retire(user, ss)
			if !done {
				t.Reset(left)
			}
		}
	}
	u.mu.Lock()
	u.forget(user, ss)
	u.mu.Unlock()
	if err := s.shutdown(ss.c); err != nil {
		s.log.Warn("user's session did not close cleanly", "err", err)
	}
	s.log.Debug("user's session closed", "user", user)
}

func (s *server) cfgTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.timeout
}

// SignIn begins the operator's sign-in to server, a remote server that
// acts as the operator's account, from a chat: its browser comes back to
// redirectURI, and tag is handed back when it finishes. It returns the
// URL to send the admin to and the host of the server.
func (h *Hub) SignIn(ctx context.Context, server, redirectURI, tag string) (authURL, host string, err error) {
	return h.beginSignIn(ctx, server, "", redirectURI, tag)
}

// BeginConnect begins user's sign-in to server, a remote server that acts
// as each user's own account, outside a call: a Connect the call asked
// for that the user opens elsewhere (a card asked in a group and opened
// in the user's own chat). Otherwise it is SignIn.
func (h *Hub) BeginConnect(ctx context.Context, server, user, redirectURI, tag string) (authURL, host string, err error) {
	if user == "" {
		return "", "", errNoUser
	}
	return h.beginSignIn(ctx, server, user, redirectURI, tag)
}

// beginSignIn begins the sign-in of user ("" the operator) to server,
// whose entry must say the account is theirs.
func (h *Hub) beginSignIn(ctx context.Context, server, user, redirectURI, tag string) (authURL, host string, err error) {
	s, err := h.server(server)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	switch {
	case cfg.err != nil:
		return "", "", fmt.Errorf("server %q: invalid settings: %w", server, cfg.err)
	case user == "" && (cfg.typ == TypeStdio || cfg.account != AccountOperator):
		return "", "", fmt.Errorf("server %q: only a remote server that acts as the operator's account is signed in to by an admin", server)
	case user != "" && (cfg.typ == TypeStdio || cfg.account != AccountUser):
		return "", "", fmt.Errorf("server %q: only a remote server that acts as each user's own account is connected to by a user", server)
	case h.opts.Auth == nil:
		return "", "", errors.New("no sign-ins: the hub has no Authorizer")
	}
	req := mcpgram.SignIn{Server: server, UserID: user, ServerURL: cfg.url, Config: cfg.oauth, Tag: tag}
	authURL, err = h.opts.Auth.BeginSignIn(ctx, req, cfg.headers, redirectURI)
	return authURL, mcpgram.Connection{URL: cfg.url}.Host(), err
}
