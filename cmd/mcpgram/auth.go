package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store"
)

// newAuth makes the keeper of sign-ins to MCP servers over st. Without
// OAUTH_KEY, one instance on SQLite keeps a key of its own beside the
// database, made at its first sign-in; instances sharing PostgreSQL must
// share a key, which only the operator can give them all.
func newAuth(cfg *config.Config, st store.OAuth, logger *slog.Logger) (*oauth.Manager, error) {
	opts := oauth.Options{
		Store:             st,
		Key:               cfg.OAuthKey,
		ClientMetadataURL: cfg.ClientMetadataURL,
		Logger:            logger.With("component", "oauth"),
	}
	if cfg.OAuthKey == "" && cfg.DatabaseURL == "" {
		opts.KeyFile = keyFilePath(cfg)
	}
	m, err := oauth.New(opts)
	if err != nil {
		return nil, fmt.Errorf("OAUTH_KEY: %w", err)
	}
	return m, nil
}

// keyFilePath is the file of the key that seals sign-ins when the
// operator sets no OAUTH_KEY: beside the SQLite database, as an absolute
// path, which the log then names.
func keyFilePath(cfg *config.Config) string {
	p := filepath.Join(filepath.Dir(cfg.DatabasePath), oauth.KeyFileName)
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// errSharedKey: PostgreSQL without OAUTH_KEY, where no one instance may
// make the key that all must share.
var errSharedKey = errors.New("no OAUTH_KEY is set: with DATABASE_URL, every instance keeps its sign-ins in the one database, sealed with one key that they must all share, so mcpgram does not make one: set OAUTH_KEY (or OAUTH_KEY_FILE) to the same random secret of at least 32 characters on every instance, such as the output of `openssl rand -base64 32`")

// lazyStore is the database of the operator's commands (mcp list, call,
// login), opened at its first use: only when a remote server asks for a
// sign-in, so that listing local servers leaves no database behind.
type lazyStore struct {
	ctx    context.Context
	cfg    *config.Config
	logger *slog.Logger

	once sync.Once
	st   store.Store
	err  error
}

func (l *lazyStore) get() (store.OAuth, error) {
	l.once.Do(func() {
		app := &App{}
		l.err = app.openStore(l.ctx, l.cfg, l.logger)
		l.st = app.Store
	})
	return l.st, l.err
}

// Close closes the database if it was opened.
func (l *lazyStore) Close() error {
	l.once.Do(func() {}) // nothing opens it from now on
	if l.st == nil {
		return nil
	}
	return l.st.Close()
}

func (l *lazyStore) GetOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	st, err := l.get()
	if err != nil {
		return store.OAuthGrant{}, err
	}
	return st.GetOAuthGrant(ctx, server, userID)
}

func (l *lazyStore) PutOAuthGrant(ctx context.Context, server, userID string, sealed []byte) (int64, error) {
	st, err := l.get()
	if err != nil {
		return 0, err
	}
	return st.PutOAuthGrant(ctx, server, userID, sealed)
}

func (l *lazyStore) ClaimOAuthRefresh(ctx context.Context, server, userID string, version int64, until time.Time) (bool, error) {
	st, err := l.get()
	if err != nil {
		return false, err
	}
	return st.ClaimOAuthRefresh(ctx, server, userID, version, until)
}

func (l *lazyStore) UpdateOAuthGrant(ctx context.Context, server, userID string, version int64, sealed []byte) (int64, error) {
	st, err := l.get()
	if err != nil {
		return 0, err
	}
	return st.UpdateOAuthGrant(ctx, server, userID, version, sealed)
}

func (l *lazyStore) DeleteOAuthGrant(ctx context.Context, server, userID string) error {
	st, err := l.get()
	if err != nil {
		return err
	}
	return st.DeleteOAuthGrant(ctx, server, userID)
}

func (l *lazyStore) TakeOAuthGrant(ctx context.Context, server, userID string) (store.OAuthGrant, error) {
	st, err := l.get()
	if err != nil {
		return store.OAuthGrant{}, err
	}
	return st.TakeOAuthGrant(ctx, server, userID)
}

func (l *lazyStore) ListOAuthGrants(ctx context.Context, userID string) ([]store.OAuthGrantInfo, error) {
	st, err := l.get()
	if err != nil {
		return nil, err
	}
	return st.ListOAuthGrants(ctx, userID)
}

func (l *lazyStore) GetOAuthClient(ctx context.Context, server, issuer, redirectURI string) ([]byte, error) {
	st, err := l.get()
	if err != nil {
		return nil, err
	}
	return st.GetOAuthClient(ctx, server, issuer, redirectURI)
}

func (l *lazyStore) PutOAuthClient(ctx context.Context, server, issuer, redirectURI string, sealed []byte) error {
	st, err := l.get()
	if err != nil {
		return err
	}
	return st.PutOAuthClient(ctx, server, issuer, redirectURI, sealed)
}

func (l *lazyStore) PutOAuthFlow(ctx context.Context, f store.OAuthFlow) error {
	st, err := l.get()
	if err != nil {
		return err
	}
	return st.PutOAuthFlow(ctx, f)
}

func (l *lazyStore) GetOAuthFlow(ctx context.Context, state string) (store.OAuthFlow, error) {
	st, err := l.get()
	if err != nil {
		return store.OAuthFlow{}, err
	}
	return st.GetOAuthFlow(ctx, state)
}

func (l *lazyStore) TakeOAuthFlow(ctx context.Context, state string) (store.OAuthFlow, error) {
	st, err := l.get()
	if err != nil {
		return store.OAuthFlow{}, err
	}
	return st.TakeOAuthFlow(ctx, state)
}

var _ store.OAuth = (*lazyStore)(nil)

// A cliAuth is the sign-in of the operator's commands: the keeper of
// sign-ins over the lazily opened database.
type cliAuth struct {
	*oauth.Manager
	st *lazyStore
}

// newCLIAuth makes the sign-in of an operator's command. With
// interactive, a server that asks for a sign-in gets one at once, in the
// browser (see openBrowser).
func newCLIAuth(ctx context.Context, con console, logger *slog.Logger, interactive bool) (*cliAuth, error) {
	st := &lazyStore{ctx: ctx, cfg: con.cfg, logger: logger}
	m, err := newAuth(con.cfg, st, logger)
	if err != nil {
		return nil, err
	}
	if interactive {
		m.SetInteractive(operatorOnly(oauth.Loopback(openBrowser(con.getenv, con.stderr))))
	}
	return &cliAuth{Manager: m, st: st}, nil
}

// Close closes the database, if a sign-in opened it.
func (a *cliAuth) Close() error { return a.st.Close() }

// openBrowser sends the operator to a sign-in's URL: it prints the URL
// on w and, when $BROWSER names a program, runs it with the URL as its
// argument (as xdg-open and sensible-browser do). The program is not
// waited for: a browser stays open, and the sign-in ends when it comes
// back to the loopback port.
func openBrowser(getenv func(string) (string, bool), w io.Writer) func(ctx context.Context, authURL string) error {
	return func(ctx context.Context, authURL string) error {
		fmt.Fprintf(w, "mcpgram: to sign in, open this address in a browser:\n\n  %s\n\n", authURL)
		browser, _ := getenv("BROWSER")
		// $BROWSER may list several programs, separated by colons.
		first, _, _ := strings.Cut(browser, ":")
		argv := strings.Fields(first)
		if len(argv) == 0 {
			return nil
		}
		cmd := exec.Command(argv[0], append(argv[1:], authURL)...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start $BROWSER: %w", err)
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
}

// loginCommand signs the operator in to the remote server name, for
// every chat, and then starts the servers to show it answering.
func loginCommand(ctx context.Context, con console, name string) error {
	cfg, stdout := con.cfg, con.stdout
	logger := cliLogger(cfg, con.stderr)
	probe, err := newHub(cfg, logger, hubParts{})
	if err != nil {
		return err
	}
	r, err := probe.Remote(name)
	if errors.Is(err, mcpgram.ErrUnknownServer) {
		err = knownServer(cfg, probe.Catalog(), name)
	}
	closeAndWarn(probe, logger)
	if err != nil {
		return err
	}
	if cfg.OAuthKey == "" && cfg.DatabaseURL != "" {
		return errSharedKey
	}
	auth, err := newCLIAuth(ctx, con, logger, true)
	if err != nil {
		return err
	}
	defer closeAndWarn(auth, logger)
	err = auth.Login(ctx, mcpgram.SignIn{Server: name, ServerURL: r.URL, Config: r.OAuth}, r.Headers)
	if errors.Is(err, oauth.ErrNoSignIn) {
		fmt.Fprintf(stdout, "%s answered without asking for a sign-in: nothing to do\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed in to %s\n", name)
	h, err := startHub(ctx, cfg, logger, auth)
	if err != nil {
		return err
	}
	defer closeAndWarn(h, logger)
	for _, s := range h.Catalog().Servers {
		if s.Name != name {
			continue
		}
		if err := printServers(stdout, mcpgram.Catalog{Servers: []mcpgram.ServerInfo{s}}); err != nil {
			return err
		}
		if s.Status != mcpgram.StatusRunning {
			// Signed in, but the server does not answer as it should.
			return exitError{1}
		}
	}
	return nil
}

// logoutCommand ends the operator's sign-in to the server name: the
// tokens are deleted from the database and revoked at the authorization
// server where it offers revocation. A revocation that fails exits 1
// (the sign-in is gone from mcpgram all the same); no sign-in is nothing
// to do, but a name the settings file does not have is a usage error.
func logoutCommand(ctx context.Context, con console, name string) error {
	cfg, stdout, stderr := con.cfg, con.stdout, con.stderr
	logger := cliLogger(cfg, stderr)
	auth, err := newCLIAuth(ctx, con, logger, false)
	if err != nil {
		return err
	}
	defer closeAndWarn(auth, logger)
	revoked, err := auth.Disconnect(ctx, name, "")
	var re *mcpgram.RevokeError
	switch {
	case errors.Is(err, mcpgram.ErrNotSignedIn):
		probe, herr := newHub(cfg, logger, hubParts{})
		if herr != nil {
			return herr
		}
		herr = knownServer(cfg, probe.Catalog(), name)
		closeAndWarn(probe, logger)
		if herr != nil {
			return herr
		}
		fmt.Fprintf(stdout, "not signed in to %s: nothing to do\n", name)
		return nil
	case errors.As(err, &re):
		fmt.Fprintf(stdout, "signed out of %s: its tokens are deleted here\n", name)
		fmt.Fprintf(stderr, "mcpgram: %v\n", err)
		return exitError{1}
	case err != nil:
		return err
	case revoked:
		fmt.Fprintf(stdout, "signed out of %s: its tokens are deleted here and revoked by its authorization server\n", name)
	default:
		fmt.Fprintf(stdout, "signed out of %s: its tokens are deleted here (its authorization server offers no revocation: they end when they expire)\n", name)
	}
	return nil
}
