package main_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Two instances share PostgreSQL: a user's call waits for the connect
// card on one, and the browser comes back (PUBLIC_URL) to the other,
// which finishes the sign-in from the flow in the database and closes
// the form there; the waiting call finds it and runs with the user's
// token.
func TestConnectFinishesOnTheOtherInstance(t *testing.T) {
	fake := oauthfake.Start(t)
	model := llmfake.New(t, whoModel)
	var target atomic.Pointer[url.URL]
	front := httptest.NewTLSServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target.Load()) }})
	t.Cleanup(front.Close)
	mine := map[string]any{"mine": map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 10,
		"oauth": map[string]any{"account": "user"}, "autoApprove": []string{"whoami"}}}
	cl := startClusterWith(t, testenv.Postgres(t), 2, model, nil, mine, "PUBLIC_URL="+front.URL, "OAUTH_KEY="+accountsKey)

	cl.tg.Text(42, 42, "who am I?")
	_, authURL := connectCard(t, cl.tg, 42, 0)
	waiting := -1
	for i, l := range cl.logs {
		if strings.Contains(l.String(), "asking a user to connect their account") {
			waiting = i
		}
	}
	if waiting < 0 {
		t.Fatal("no instance says it asked the user to connect")
	}
	other := 1 - waiting
	target.Store(&url.URL{Scheme: "http", Host: cl.addrs[other]})
	back := signIn(t, authURL, "alice")
	if code, body := comeBack(t, front.Client(), front.URL, back); code != http.StatusOK || !strings.Contains(body, "Connected to mine") {
		t.Fatalf("callback on instance %d: %d %q", other, code, body)
	}
	cl.tg.WaitText(t, 42, "Seen: Connected to mine")
	if !strings.Contains(cl.logs[other].String(), "signed in") || strings.Contains(cl.logs[waiting].String(), "signed in") {
		t.Errorf("the sign-in was not finished by instance %d alone", other)
	}
	// Each instance learns the server's tools from its own first session:
	// one that has not yet lists connect, which connects without a card.
	for i := 0; ; i++ {
		asked := cl.tg.Text(42, 42, "who am I now?")
		waitAfter(t, cl.tg, 42, asked, "Seen: ")
		if seenAfter(cl.tg, 42, asked, "Seen: alice") {
			break
		}
		if i == 5 {
			t.Fatal("whoami never reached the server as alice")
		}
	}
	if n := fake.Counts().Authorizations; n != 1 {
		t.Errorf("authorizations = %d, want 1: the second instance asked again", n)
	}
	for i := range cl.procs {
		cl.stop(t, i)
	}
	for _, l := range cl.logs {
		for _, tok := range fake.Tokens() {
			if strings.Contains(l.String(), tok) {
				t.Fatal("a token in an instance's log")
			}
		}
	}
}
