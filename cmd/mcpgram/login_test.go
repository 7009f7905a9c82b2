package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/internal/oauthfake"
)

// `mcpgram mcp login` signs the operator in to a protected server: the
// browser ($BROWSER, here this test binary) is sent to the authorization
// server and comes back to mcpgram's loopback port. Later commands, with
// nobody there to sign in, use the kept sign-in; no token reaches the
// output, and `mcpgram config` masks the key. Without OAUTH_KEY the
// sign-in is refused, saying how to set one.
func TestMCPLogin(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := filepath.Join(b.dir, "mcp-settings.json")
	entry := `{"mcpServers": {"remote": {"type": "streamableHttp", "url": "` + fake.URL() + `/mcp", "timeout": 20}}}`
	if err := os.WriteFile(settings, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "operator-key-0123456789-0123456789"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"OAUTH_KEY=" + key, "MCPGRAM_TEST_BROWSER=1", "BROWSER=" + self, "MCP_SETTINGS=" + settings}

	out, errOut, code := b.run(env, "mcp", "login", "remote")
	if code != 0 || !strings.Contains(out, "signed in to remote") || !strings.Contains(out, "running, 1 tool") {
		t.Fatalf("mcp login = %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, fake.URL()+"/authorize?") {
		t.Errorf("mcp login did not print the address to open:\n%s", errOut)
	}

	// Nobody to sign in now (no $BROWSER, no terminal): the kept sign-in.
	out2, errOut2, code := b.run([]string{"OAUTH_KEY=" + key, "MCP_SETTINGS=" + settings}, "mcp", "call", "remote", "whoami")
	if code != 0 || strings.TrimSpace(out2) != "operator" {
		t.Fatalf("mcp call after login = %d %q\n%s", code, out2, errOut2)
	}
	if c := fake.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizations)
	}
	cfgOut, _, _ := b.run([]string{"OAUTH_KEY=" + key, "MCP_SETTINGS=" + settings}, "config")
	for _, s := range append(fake.Tokens(), key) {
		for _, text := range []string{out, errOut, out2, errOut2, cfgOut} {
			if strings.Contains(text, s) {
				t.Errorf("a secret %q reached the output:\n%s", s, text)
			}
		}
	}

	_, errOut, code = b.run([]string{"MCP_SETTINGS=" + settings, "BROWSER=" + self, "MCPGRAM_TEST_BROWSER=1"}, "mcp", "login", "remote")
	if code != 1 || !strings.Contains(errOut, "OAUTH_KEY") {
		t.Errorf("mcp login without a key = %d\n%s", code, errOut)
	}
}
