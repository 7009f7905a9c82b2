package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/oauth"
)

// callbackFields are the parts of an authorization response the callback
// page carries from its GET to its POST; nothing else is taken.
var callbackFields = []string{"code", "state", "iss", "error", "error_description"}

// maxCallbackForm bounds the body of the callback's POST.
const maxCallbackForm = 16 << 10

// signInCallback is where a browser comes back from a sign-in begun in a
// chat (PUBLIC_URL/oauth/callback), on whichever instance it reaches.
//
// The GET does not finish the sign-in: it shows whose sign-in it is (the
// Telegram user whose card held the link, or every chat for an admin's)
// and asks the person to confirm with a button, which POSTs the same
// answer back. A link forwarded by someone else, signed in to by its
// victim, would otherwise connect the victim's account to the sender's
// chats; the page tells the victim so before anything happens. The POST
// finishes the sign-in (the flow is in the database) and closes the chat's
// connect form as done, which the call waiting for it, on any instance,
// finds. An answer that is a refusal has nothing to connect and is
// finished at once. A sign-in asked in a group is finished only once its
// card was opened in its user's private chat (agent.Finishable), the one
// place its link was shown. The pages say what happened in plain,
// escaped words: no code, token or state is shown (but in the form's
// hidden fields, sent back to this page alone) or logged, and no page may
// be framed.
func signInCallback(m *oauth.Manager, a *agent.Agent, h *hub.Hub, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var query url.Values
		switch r.Method {
		case http.MethodGet:
			query = r.URL.Query()
		case http.MethodPost:
			r.Body = http.MaxBytesReader(w, r.Body, maxCallbackForm)
			if err := r.ParseForm(); err != nil {
				callbackPage(w, http.StatusBadRequest, "Nothing was changed: the form could not be read.", "")
				return
			}
			query = r.PostForm
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		answer := url.Values{}
		for _, k := range callbackFields {
			if v, ok := query[k]; ok {
				answer[k] = v
			}
		}
		if r.Method == http.MethodGet && answer.Get("error") == "" {
			confirmSignIn(w, r, m, a, logger, answer)
			return
		}
		finishSignIn(w, r, m, a, h, logger, answer)
	})
}

// confirmSignIn shows whose sign-in answer belongs to, and a button that
// finishes it.
func confirmSignIn(w http.ResponseWriter, r *http.Request, m *oauth.Manager, a *agent.Agent, logger *slog.Logger, answer url.Values) {
	who, err := finishable(r.Context(), m, a, logger, answer)
	if err != nil {
		callbackPage(w, http.StatusBadRequest, "Nothing was changed: "+err.Error(), "")
		return
	}
	var sb strings.Builder
	if who.UserID == "" {
		fmt.Fprintf(&sb, "<p>You signed in to <b>%s</b> for <b>every chat</b> of this bot: every user's calls to it will act as the account you signed in with.</p>",
			html.EscapeString(who.Server))
		sb.WriteString("<p>Continue only if you are an admin of the bot and pressed Sign in yourself.</p>")
	} else {
		fmt.Fprintf(&sb, "<p>You signed in to <b>%s</b>. Continuing connects that account to the Telegram user with id <b>%s</b>: their calls to it through the bot will act as you.</p>",
			html.EscapeString(who.Server), html.EscapeString(who.UserID))
		sb.WriteString("<p>Continue only if you pressed Connect in your own chat with the bot. If someone sent you this link, close this page: nothing has been connected.</p>")
	}
	sb.WriteString(`<form method="post" action="` + mcpgram.CallbackPath + `">`)
	for _, k := range callbackFields {
		for _, v := range answer[k] {
			fmt.Fprintf(&sb, `<input type="hidden" name="%s" value="%s">`, k, html.EscapeString(v))
		}
	}
	sb.WriteString(`<button type="submit">Connect</button></form>`)
	callbackPage(w, http.StatusOK, "", sb.String())
}

// finishSignIn finishes the sign-in answer belongs to, and closes the
// chat's card.
func finishSignIn(w http.ResponseWriter, r *http.Request, m *oauth.Manager, a *agent.Agent, h *hub.Hub, logger *slog.Logger, answer url.Values) {
	if _, err := finishable(r.Context(), m, a, logger, answer); err != nil {
		callbackPage(w, http.StatusBadRequest, "Nothing was changed: "+err.Error(), "")
		return
	}
	done, err := m.Finish(r.Context(), answer)
	switch {
	case errors.Is(err, mcpgram.ErrUnknownState):
		callbackPage(w, http.StatusBadRequest, "Nothing was changed: "+err.Error(), "")
		return
	case err != nil:
		logger.Warn("sign-in callback", "server", done.Server, "user", done.UserID, "err", err)
		callbackPage(w, http.StatusBadRequest, "The sign-in to "+done.Server+" did not succeed: "+err.Error(), "")
		return
	}
	cerr := agent.NewConnections(a).Connected(r.Context(), done)
	if cerr != nil {
		logger.Info("signed in, but the chat's card was not waiting", "server", done.Server, "user", done.UserID, "err", cerr)
	}
	msg := "Connected to " + done.Server + ". You may close this page and go back to the chat."
	if done.UserID == "" {
		// The operator's sign-in, from /servers: the instance that shows
		// the admin's card reconnects the server and says so on the card;
		// with no card waiting, this one does. The others reconnect on
		// their own.
		msg = "Signed in to " + done.Server + " for every chat. You may close this page."
		if cerr != nil {
			if err := h.Restart(r.Context(), done.Server); err != nil {
				logger.Warn("reconnect after the operator's sign-in", "server", done.Server, "err", err)
			}
		}
	}
	callbackPage(w, http.StatusOK, msg, "")
}

// errUnchecked is what the page says of a sign-in that could not be
// checked (the log says why).
var errUnchecked = errors.New("the sign-in could not be checked just now; try again in a moment")

// finishable names the sign-in under way that answer belongs to, if it may
// be finished here (see agent.Finishable); the error is for the page.
func finishable(ctx context.Context, m *oauth.Manager, a *agent.Agent, logger *slog.Logger, answer url.Values) (mcpgram.FinishedSignIn, error) {
	who, err := m.Pending(ctx, answer)
	if err == nil {
		err = agent.NewConnections(a).Finishable(ctx, who)
	}
	for _, known := range []error{mcpgram.ErrUnknownState, mcpgram.ErrNoKey, agent.ErrNotYours, agent.ErrStale, agent.ErrNotOpened} {
		if errors.Is(err, known) {
			return who, err
		}
	}
	if err != nil {
		logger.Warn("check a sign-in callback", "server", who.Server, "user", who.UserID, "err", err)
		return who, errUnchecked
	}
	return who, nil
}

// callbackPage writes a page of the callback: text, escaped here, or
// body, HTML escaped by its maker. It is never cached, framed or sent as
// a referrer, and its form may post only to this site.
func callbackPage(w http.ResponseWriter, status int, text, body string) {
	if text != "" {
		body = "<p>" + html.EscapeString(text) + "</p>"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=\"utf-8\"><title>mcpgram</title>%s\n", body)
}
