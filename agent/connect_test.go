package agent_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// connectEnv is an agent whose hub has "mine", a protected server that
// acts as each user's own account, with sign-ins kept in a database of
// their own.
func connectEnv(t *testing.T, model llmfake.Handler, timeout time.Duration) (*env, *oauth.Manager, *oauthfake.Server) {
	t.Helper()
	fake := oauthfake.Start(t)
	db := testenv.SQLite(t, "")
	m, err := oauth.New(oauth.Options{Store: db, Key: "a-test-key-of-more-than-32-characters!"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, model, setup{
		servers: map[string]any{"mine": map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 10,
			"oauth": map[string]any{"account": "user"}, "autoApprove": []string{"whoami"}}},
		elicit: true,
		auth:   m,
		config: func(w *wiring) {
			w.FormPoll = 20 * time.Millisecond
			w.ApprovalTimeout = timeout
			w.SignIns = m
			w.Group = isGroup
		},
	})
	return e, m, fake
}

// A connect card nobody answers expires: the call is cancelled, and the
// model is told the user did not connect.
func TestConnectExpires(t *testing.T) {
	e, _, fake := connectEnv(t, toolThenDoneOn("mine", "connect"), 300*time.Millisecond)
	front := newFormFront()
	done := e.startTurn("connect me", front)
	f := <-front.forms
	if f.Mode != agent.ModeConnect || f.Server != "mine" || f.Host != "127.0.0.1" || !f.PasteBack || !strings.HasPrefix(f.URL, fake.URL()+"/authorize?") {
		t.Fatalf("form = %+v", f)
	}
	closed := <-front.closed
	if closed.Outcome != agent.FormExpired {
		t.Errorf("outcome = %q, want expired", closed.Outcome)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := e.model.Calls()[len(e.model.Calls())-1].Request.Last(); !strings.Contains(last, "cancelled: the user did not connect their account to mine") {
		t.Errorf("the model was told %q", last)
	}
	// Pasted once expired, the address changes nothing.
	back, err := oauthfake.Authorize(t.Context(), f.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.NewForms(e.agent).FormInput(t.Context(), alice, f.ID, agent.FormInput{Op: agent.FormType, Text: back, Step: -1}); err != agent.ErrStale {
		t.Errorf("a paste into the expired form = %v, want ErrStale", err)
	}
	if n := fake.Counts().CodeExchanges; n != 0 {
		t.Errorf("code exchanges = %d, want 0", n)
	}
}

// A sign-in finished by the callback of another user's flow does not
// close the form: Connected checks the user and the server.
func TestConnectedChecksWhose(t *testing.T) {
	e, m, _ := connectEnv(t, toolThenDoneOn("mine", "connect"), time.Minute)
	front := newFormFront()
	done := e.startTurn("connect me", front)
	f := <-front.forms
	back, err := oauthfake.Authorize(t.Context(), f.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(back)
	finished, err := m.Finish(t.Context(), u.Query())
	if err != nil {
		t.Fatal(err)
	}
	other := finished
	other.UserID = "someone else"
	if err := agent.NewConnections(e.agent).Connected(t.Context(), other); err != agent.ErrNotYours {
		t.Errorf("Connected for another user = %v, want ErrNotYours", err)
	}
	if err := agent.NewConnections(e.agent).Connected(t.Context(), finished); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := e.model.Calls()[len(e.model.Calls())-1].Request.Last(); !strings.Contains(last, "Its tools: [whoami]") {
		t.Errorf("the model was told %q", last)
	}
}

// toolThenDoneOn calls tool on server, then answers with the result.
func toolThenDoneOn(server, tool string) llmfake.Handler {
	return func(c llmfake.Call) llmfake.Reply {
		if last := c.Request.Last(); strings.Contains(last, "Result:") || strings.Contains(last, "Error:") {
			return llmfake.Text(complete("done: " + last))
		}
		return llmfake.Text(useTool(server, tool, "{}"))
	}
}
