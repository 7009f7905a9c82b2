package apps

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// A HostStore is what the pages read and record: the views, and the
// audit log an app's tool calls go to, as the model's do.
type HostStore interface {
	store.AppViews
	store.Interactions
	RecordToolCall(ctx context.Context, c store.ToolCall) error
}

// A Hub runs what an app asks of its server; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
	CallTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error)
	ReadResource(ctx context.Context, caller mcpgram.Caller, server, uri string) (*mcpgram.Result, error)
}

// HostOptions are the settings of a Host; BotToken is required.
type HostOptions struct {
	// BotToken checks Telegram's init data, and keys the URL tokens.
	BotToken string
	// AutoApproveAll (AUTO_APPROVE=all) lets an app call any of its
	// server's app tools without asking; without it, those the server's
	// autoApprove lists, and the others once approved in the chat.
	AutoApproveAll bool
	// Asker sends the approval cards of the apps' requests that need
	// one; nil: such requests are refused.
	Asker Asker
	// Messenger takes the apps' messages into their chats; nil: they
	// are refused.
	Messenger Messenger
	// Contexts keeps the apps' context for their chats' next turns; nil:
	// it is refused.
	Contexts Contexts
	// Permissions are the browser features (MCP Apps' names: camera,
	// microphone, geolocation, clipboardWrite) an app's page may be
	// granted when it asks for them (APPS_PERMISSIONS); none by default.
	Permissions []string
	// Frames is where and how the apps' pages are framed (see
	// NewFrames); the zero Frames: under the host page's origin.
	Frames  Frames
	Metrics *metrics.Metrics
	Logger  *slog.Logger
}

// A Host serves the apps' pages under PathPrefix: the host page, which
// holds the bridge, the app's own page in a sandboxed frame, and the
// bridge's endpoint. Every request is checked against the URL's token;
// every request of the bridge against Telegram's init data too.
type Host struct {
	store  HostStore
	hub    Hub
	signer *Signer
	opts   HostOptions
	log    *slog.Logger

	mu     sync.Mutex
	limits map[int64]*rate.Limiter
}

// NewHost returns the Host of the views kept in s, whose apps' requests
// go through h.
func NewHost(s HostStore, h Hub, opts HostOptions) *Host {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Host{store: s, hub: h, signer: NewSigner(opts.BotToken), opts: opts, log: opts.Logger, limits: map[int64]*rate.Limiter{}}
}

//go:embed page
var page embed.FS

// Routes are where a Host's routes go; *web.Server is one.
type Routes interface {
	// Handle adds a route by its pattern (http.ServeMux's).
	Handle(pattern string, h http.Handler)
	// HandleHost gives h the requests to the hosts match accepts, and
	// no other route.
	HandleHost(match func(host string) bool, h http.Handler)
}

// Register adds the Host's routes to r.
func (h *Host) Register(r Routes) {
	r.Handle("GET "+PathPrefix+"host.js", http.HandlerFunc(h.script))
	r.Handle("GET "+PathPrefix+"{token}", http.HandlerFunc(h.hostPage))
	r.Handle("POST "+PathPrefix+"{token}/rpc", http.HandlerFunc(h.rpc))
	h.opts.Frames.register(r, h.frame)
}

// headers sets what every page of the Host sends.
func headers(w http.ResponseWriter, contentType, csp string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

// refuse answers a refused request with a plain sentence, and counts it.
func (h *Host) refuse(w http.ResponseWriter, method string, code int, msg string, err error) {
	status := "refused"
	if code == http.StatusTooManyRequests {
		status = "limited"
	}
	h.opts.Metrics.AppRequest(method, status)
	h.log.Info("app request refused", "method", method, "code", code, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// expired is what a refused page says.
const expired = "This view is no longer available, or not yours: open it again from its button in the chat."

// script serves the host page's script.
func (h *Host) script(w http.ResponseWriter, r *http.Request) {
	b, _ := page.ReadFile("page/host.js")
	headers(w, "text/javascript; charset=utf-8", "default-src 'none'")
	_, _ = w.Write(b)
}

// hostPage serves the page that holds the app's frame and the bridge, to
// a valid token; the init data it needs never reaches the server in a
// GET (Telegram puts it in the URL's fragment), so the page's requests
// carry it.
func (h *Host) hostPage(w http.ResponseWriter, r *http.Request) {
	if _, _, err := h.signer.Verify(r.PathValue("token"), time.Now()); err != nil {
		h.refuse(w, "page", http.StatusForbidden, expired, err)
		return
	}
	b, _ := page.ReadFile("page/host.html")
	// No X-Frame-Options: Telegram's web clients show Mini Apps in a frame.
	headers(w, "text/html; charset=utf-8", h.opts.Frames.hostCSP())
	h.opts.Metrics.AppRequest("page", "ok")
	_, _ = w.Write(b)
}

// allow reports whether user may make another request now: a few a
// second, in bursts, per user.
func (h *Host) allow(user int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.limits[user]
	if !ok {
		if len(h.limits) >= maxLimited {
			clear(h.limits) // a flood of users: start their counts over
		}
		l = rate.NewLimiter(rate.Limit(requestsPerSecond), requestBurst)
		h.limits[user] = l
	}
	return l.Allow()
}

// The per-user rate of an app's requests, and how many users are tracked.
const (
	requestsPerSecond = 5
	requestBurst      = 20
	maxLimited        = 10000
)

// view returns the unexpired view the token names for user, or why not.
func (h *Host) view(ctx context.Context, token string, user int64) (store.AppView, error) {
	id, tokenUser, err := h.signer.Verify(token, time.Now())
	if err != nil {
		return store.AppView{}, err
	}
	if tokenUser != user {
		return store.AppView{}, fmt.Errorf("token of user %d opened by %d: %w", tokenUser, user, ErrBadToken)
	}
	v, err := h.store.GetAppView(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.AppView{}, fmt.Errorf("view %s: %w", id, ErrBadToken)
	}
	if err != nil {
		return store.AppView{}, err
	}
	if v.UserID != strconv.FormatInt(user, 10) || !time.Now().Before(v.ExpiresAt) {
		return store.AppView{}, fmt.Errorf("view %s expired or of another user: %w", id, ErrBadToken)
	}
	return v, nil
}

// readJSON decodes at most limit bytes of r's body into v.
func readJSON(r *http.Request, limit int64, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("body over %d bytes", limit)
	}
	return json.Unmarshal(b, v)
}
