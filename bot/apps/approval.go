// Approvals of an app's requests: a tools/call or resources/read that the
// model would need the user's approval for needs it from the app too. The
// request is kept as a pending interaction of the store, its card goes to
// the user's private chat, and the bridge waits for the press, asking
// again every awaitWindow: Telegram's WebViews and proxies cut long
// requests, and any instance may take the next ask or the press.
//
// Two pending interactions make it happen once: the card's, which the
// press resolves (approved or denied), and the run's, which the first ask
// that finds the card approved resolves before it runs the request. The
// store resolves each atomically, across instances. Neither has an
// ExpiresAt, so that the agent's expiry, which knows only the model's
// batches, never sees them: an app's approval ends approvalTTL after it
// was asked, decided here.

package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/store"
)

// An Asker shows the user the approval card of an app's request, in
// their private chat with the bot; *Apps is one.
type Asker interface {
	AskApproval(ctx context.Context, user, pending int64, html string) error
}

const (
	// approvalTTL is how long an app's request waits for the user.
	approvalTTL = 5 * time.Minute
	// awaitWindow is how long one request of the bridge waits for the
	// user's press, within what WebViews and proxies let a request last.
	awaitWindow = 20 * time.Second
	// awaitPoll is how often a waiting request reads the press: it may
	// come to another instance.
	awaitPoll = 200 * time.Millisecond
)

// The chats of the pending interactions of an app's approval: apart from
// every conversation's, so that they never supersede the model's.
const (
	askPrefix = "app:"
	runPrefix = "app-run:"
)

func askChat(viewID string) string { return askPrefix + viewID }
func runChat(pending int64) string { return runPrefix + strconv.FormatInt(pending, 10) }

// An appAsk is what an app asked, kept as the payload of its approval.
type appAsk struct {
	Server    string         `json:"server"`
	Tool      string         `json:"tool,omitempty"`
	URI       string         `json:"uri,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Consent   bool           `json:"consent,omitempty"`
}

// awaiting is the answer to a request still waiting for the user: the
// bridge asks again with mcpgram/await.
type awaiting struct {
	Pending int64
}

// codeDeclined is the JSON-RPC error of a request the user declined, or
// let expire.
const codeDeclined = -32000

// askFor keeps a, which v's app asked for user, as an approval, sends its
// card, and waits for the press as await does.
func (h *Host) askFor(ctx context.Context, v store.AppView, user int64, a appAsk) (any, *rpcError) {
	if h.opts.Asker == nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "this needs approval in the chat, which this bot cannot ask for"}
	}
	// One card at a time per view: an app cannot flood the chat.
	switch p, err := h.store.OpenPending(ctx, askChat(v.ID)); {
	case err == nil && time.Since(p.CreatedAt) <= approvalTTL:
		return nil, &rpcError{Code: codeDeclined, Message: "another request of this app waits for approval in the chat"}
	case err != nil && !errors.Is(err, store.ErrNotFound):
		h.log.Error("read an app's approval", "err", err)
		return nil, &rpcError{Code: codeInternal, Message: "the approval could not be asked"}
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return nil, &rpcError{Code: codeInvalidParams, Message: "the request's arguments are not JSON"}
	}
	uid := strconv.FormatInt(user, 10)
	id, err := h.store.CreatePending(ctx, store.Pending{ChatID: askChat(v.ID), UserID: uid, Kind: store.KindApproval, Payload: string(payload)})
	if err == nil {
		_, err = h.store.CreatePending(ctx, store.Pending{ChatID: runChat(id), UserID: uid, Kind: store.KindApproval, Payload: "{}"})
	}
	if err != nil {
		h.log.Error("keep an app's approval", "server", v.Server, "err", err)
		return nil, &rpcError{Code: codeInternal, Message: "the approval could not be asked"}
	}
	args, _ := json.Marshal(a.Arguments)
	card, _ := render.CardFor(h.hub.Catalog(), a.Server, a.Tool, a.URI, string(args), a.Consent).HTML()
	html := fmt.Sprintf("🧩 The app <b>%s</b> asks:\n%s", render.Escape(render.Visible(render.Shorten(v.Title, 80))), card)
	if err := h.opts.Asker.AskApproval(ctx, user, id, html); err != nil {
		h.log.Warn("send an app's approval", "user", user, "err", err)
		_ = h.store.ResolvePending(context.WithoutCancel(ctx), id, "unsent", "")
		return nil, &rpcError{Code: codeInternal, Message: "the approval could not be sent to the chat"}
	}
	return h.await(ctx, v, user, id)
}

// await waits, up to awaitWindow, for the user's word on approval id of
// v's app, and then runs what was approved, once; still waiting, it
// answers awaiting.
func (h *Host) await(ctx context.Context, v store.AppView, user, id int64) (any, *rpcError) {
	deadline := time.NewTimer(awaitWindow)
	defer deadline.Stop()
	tick := time.NewTicker(awaitPoll)
	defer tick.Stop()
	for {
		p, err := h.store.GetPending(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound) || err == nil && (p.ChatID != askChat(v.ID) || p.UserID != strconv.FormatInt(user, 10)):
			return nil, &rpcError{Code: codeInvalidParams, Message: "no such approval"}
		case err != nil:
			h.log.Error("read an app's approval", "err", err)
			return nil, &rpcError{Code: codeInternal, Message: "the approval could not be read"}
		case !p.IsOpen():
			return h.decided(ctx, v, user, p)
		case time.Since(p.CreatedAt) > approvalTTL:
			if err := h.store.ResolvePending(ctx, id, "expired", ""); err != nil && !errors.Is(err, store.ErrResolved) {
				return nil, &rpcError{Code: codeInternal, Message: "the approval could not be read"}
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, &rpcError{Code: codeInternal, Message: "the request ended"}
		case <-deadline.C:
			return awaiting{Pending: id}, nil
		case <-tick.C:
		}
	}
}

// decided runs what approval p approved, if no other request ran it, or
// says why not.
func (h *Host) decided(ctx context.Context, v store.AppView, user int64, p store.Pending) (any, *rpcError) {
	switch p.Resolution {
	case "approved":
	case "denied":
		return nil, &rpcError{Code: codeDeclined, Message: "the user declined"}
	default:
		return nil, &rpcError{Code: codeDeclined, Message: "the approval expired, or another request replaced it"}
	}
	run, err := h.store.OpenPending(ctx, runChat(p.ID))
	if err == nil {
		err = h.store.ResolvePending(ctx, run.ID, "ran", "")
	}
	if err != nil {
		// Another request of this approval ran it (or is running it).
		return nil, &rpcError{Code: codeInvalidParams, Message: "this approval was used"}
	}
	var a appAsk
	if err := json.Unmarshal([]byte(p.Payload), &a); err != nil || a.Server != v.Server {
		return nil, &rpcError{Code: codeInternal, Message: "the approval could not be read"}
	}
	if a.Tool != "" {
		return h.runTool(ctx, v, user, a.Tool, a.Arguments)
	}
	return h.runRead(ctx, v, user, a.URI)
}

// awaitParams reads mcpgram/await's pending id.
func awaitParams(raw json.RawMessage) (int64, bool) {
	var p struct {
		Pending int64 `json:"pending"`
	}
	err := json.Unmarshal(raw, &p)
	return p.Pending, err == nil && p.Pending > 0
}

// isAppApproval reports whether p is the card of an app's approval.
func isAppApproval(p store.Pending) bool { return strings.HasPrefix(p.ChatID, askPrefix) }
