package main_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// perUserSettings writes settings with "mine", a per-user server on fake.
func perUserSettings(t *testing.T, b *binary, fake *oauthfake.Server) string {
	t.Helper()
	return testenv.WriteSettings(t, b.dir, map[string]any{
		"mine": map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 10,
			"oauth": map[string]any{"account": "user"}, "autoApprove": []string{"whoami"}},
	})
}

// `mcpgram mcp call` of a per-user server signs the --user in, in the
// browser ($BROWSER, here this test binary signing in as an account of
// the fake), and the browser comes back to a loopback port; the call then
// runs with that user's token, and later calls use the kept sign-in.
// Another user, with nobody there to sign in (no terminal, no $BROWSER),
// gets the clear error. No token reaches the output.
func TestMCPCallConnectsTheUser(t *testing.T) {
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := perUserSettings(t, b, fake)
	base := []string{"OAUTH_KEY=" + accountsKey, "MCP_SETTINGS=" + settings}
	browser := append(base, browserEnv(t, "alice-at-tracker")...)

	out, errOut, code := b.run(browser, "--user", "alice", "mcp", "call", "mine", "whoami")
	if code != 0 || strings.TrimSpace(out) != "alice-at-tracker" {
		t.Fatalf("mcp call = %d %q\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{`sign in to it as user "alice"`, fake.URL() + "/authorize?", "connected to mine"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// Nobody to sign in now: alice's kept sign-in.
	out2, errOut2, code := b.run(base, "--user", "alice", "mcp", "call", "mine", "whoami")
	if code != 0 || strings.TrimSpace(out2) != "alice-at-tracker" {
		t.Fatalf("mcp call after connecting = %d %q\n%s", code, out2, errOut2)
	}
	// Bob has no sign-in and nobody is there to make one.
	out3, errOut3, code := b.run(base, "--user", "bob", "mcp", "call", "mine", "whoami")
	if code != 1 || !strings.Contains(errOut3, "nobody can be asked to connect") {
		t.Errorf("mcp call for bob without a browser = %d %q\n%s", code, out3, errOut3)
	}
	if c := fake.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizations)
	}
	for _, s := range append(fake.Tokens(), accountsKey) {
		for _, text := range []string{out, errOut, out2, errOut2, out3, errOut3} {
			if strings.Contains(text, s) {
				t.Errorf("a secret %q reached the output:\n%s", s, text)
			}
		}
	}
}

// `mcpgram chat` connects its user (--user, default local) to a per-user
// server when the model calls it: the terminal shows the address, the
// browser comes back to a loopback port, the call runs with the user's
// token, and the next call needs no sign-in.
func TestChatConnectsTheUser(t *testing.T) {
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := perUserSettings(t, b, fake)
	model := llmfake.New(t, whoModel)
	chat := startChat(t, b, settings, append([]string{"OPENAI_BASE_URL=" + model.URL(), "OAUTH_KEY=" + accountsKey},
		browserEnv(t, "local-at-tracker")...)...)
	chat.converse([]step{
		{"> ", "connect me"},
		{`mine acts as each user's own account: sign in to it as user "local"`, ""},
		{fake.URL() + "/authorize?", ""},
		{"connected to mine", ""},
		{"Seen: Connected to mine", ""},
		{"> ", "who am I?"},
		{"Seen: local-at-tracker", "/quit"},
	})
	chat.end()
	if c := fake.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizations)
	}
	for _, s := range fake.Tokens() {
		if strings.Contains(chat.out.String(), s) {
			t.Errorf("a token reached the terminal:\n%s", chat.out.String())
		}
	}

}
