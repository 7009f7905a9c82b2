package apps

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// DefaultFrameCSP is the Content Security Policy of an app's page that
// declares no origins of its own: the one MCP Apps requires of a page that
// declares none, and a sandbox of scripts only, so that the page has an
// opaque origin even if opened alone. FrameCSP adds what a page declares.
const DefaultFrameCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; sandbox allow-scripts"

// maxPage bounds an app's page, in bytes.
const maxPage = 4 << 20

// frameTicketTTL is how long the frame's address works: the host page
// gets it, with the init data it proved, just before it loads the frame.
const frameTicketTTL = 5 * time.Minute

// framePrefix marks a frame's ticket apart from a view's token.
const framePrefix = "frame-"

// frameURL is the address of v's app page for user, with a ticket that
// works for frameTicketTTL: an iframe's request carries no init data.
func (h *Host) frameURL(token string, v store.AppView, user int64) string {
	return h.opts.Frames.frameBase(v.Server) + PathPrefix + token + "/frame?t=" + h.signer.Sign(framePrefix+v.ID, user, time.Now().Add(frameTicketTTL))
}

// frame serves the app's page, read from its server, to a ticket the
// bridge handed out, under the policy FrameCSP makes of what the page
// declares.
func (h *Host) frame(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, user, err := h.signer.Verify(r.URL.Query().Get("t"), time.Now())
	if err == nil && !strings.HasPrefix(id, framePrefix) {
		err = fmt.Errorf("a view's token as a frame's ticket: %w", ErrBadToken)
	}
	var v store.AppView
	if err == nil {
		v, err = h.view(ctx, r.PathValue("token"), user)
	}
	if err == nil && v.ID != strings.TrimPrefix(id, framePrefix) {
		err = fmt.Errorf("the ticket of another view: %w", ErrBadToken)
	}
	if err == nil && !h.opts.Frames.servesAt(r.Host, v.Server) {
		err = fmt.Errorf("the page of server %q asked at host %q: %w", v.Server, r.Host, ErrBadToken)
	}
	if err != nil {
		h.refuse(w, "frame", http.StatusForbidden, expired, err)
		return
	}
	if !h.allow(user) {
		h.refuse(w, "frame", http.StatusTooManyRequests, "Too many requests: wait a moment.", nil)
		return
	}
	html, declared, err := h.readPage(ctx, v, user)
	if err != nil {
		h.opts.Metrics.AppRequest("frame", "error")
		h.log.Warn("read an app's page", "server", v.Server, "uri", v.ResourceURI, "err", err)
		http.Error(w, "The app's page could not be read from its server.", http.StatusBadGateway)
		return
	}
	frames := h.opts.Frames
	if _, dropped := frames.withoutOwn(declared); len(dropped) > 0 {
		h.log.Warn("an app's page declared origins of the bot's own, left out of its policy", "server", v.Server, "uri", v.ResourceURI, "origins", dropped)
	}
	csp := frames.CSP(declared)
	if csp != frames.CSP(nil) {
		// MCP Apps asks hosts to log what a page was allowed, for review.
		h.log.Info("an app's page declared origins", "server", v.Server, "uri", v.ResourceURI, "csp", csp)
	}
	headers(w, "text/html; charset=utf-8", csp)
	h.opts.Metrics.AppRequest("frame", "ok")
	_, _ = w.Write([]byte(html))
}

// readPage reads v's ui:// page from its server, as v's user: an HTML
// document of MCP Apps' MIME type, within maxPage, and what it declares
// of itself (the read's _meta.ui, else its listing's; nil when neither
// declares anything).
func (h *Host) readPage(ctx context.Context, v store.AppView, user int64) (string, *mcpgram.AppPage, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := h.hub.ReadResource(ctx, caller(v, user), v.Server, v.ResourceURI)
	if err != nil {
		return "", nil, err
	}
	html, declared, err := pageOf(v.ResourceURI, res)
	if err == nil && declared == nil {
		declared = h.listedPage(v)
	}
	return html, declared, err
}

// listedPage is what v's page declares of itself in its server's list of
// resources, or nil.
func (h *Host) listedPage(v store.AppView) *mcpgram.AppPage {
	s, _ := h.hub.Catalog().Server(v.Server)
	for _, r := range s.Resources {
		if r.URI == v.ResourceURI {
			return r.App
		}
	}
	return nil
}

// pageOf finds the page at uri in what a read of it gave.
func pageOf(uri string, res *mcpgram.Result) (string, *mcpgram.AppPage, error) {
	for _, c := range res.Content {
		if c.URI != uri && len(res.Content) > 1 {
			continue
		}
		mime := strings.ReplaceAll(strings.ToLower(c.MIMEType), " ", "")
		switch {
		case mime != mcpgram.AppMIMEType:
			return "", nil, fmt.Errorf("page of MIME type %q, want %s", c.MIMEType, mcpgram.AppMIMEType)
		case len(c.Text) > maxPage || len(c.Data) > maxPage:
			return "", nil, fmt.Errorf("page of over %d bytes", maxPage)
		case c.Text != "":
			return c.Text, c.App, nil
		case len(c.Data) > 0:
			return string(c.Data), c.App, nil
		}
	}
	return "", nil, fmt.Errorf("no page in the server's %d contents", len(res.Content))
}

// caller is the user of v's chat.
func caller(v store.AppView, user int64) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: v.ChatID}
}
