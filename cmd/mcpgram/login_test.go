package main_test

import (
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// `mcpgram mcp login` signs the operator in to a protected server: the
// browser ($BROWSER, here this test binary) is sent to the authorization
// server and comes back to mcpgram's loopback port. Later commands, with
// nobody there to sign in, use the kept sign-in; no token reaches the
// output, and `mcpgram config` masks the key.
func TestMCPLogin(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := remoteSettings(t, b, fake)
	const key = "operator-key-0123456789-0123456789"
	env := append([]string{"OAUTH_KEY=" + key, "MCP_SETTINGS=" + settings}, browserEnv(t, "")...)

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
}

// Without OAUTH_KEY, on SQLite, `mcpgram mcp login` makes a key in
// oauth.key beside the database (readable by its owner alone), says
// where, and signs in; the next command opens the sign-in with that key
// and makes none; a key set by the operator wins over the file. With
// DATABASE_URL the key must be shared by every instance, so the login
// is refused, saying so, and no file is made.
func TestMCPLoginMakesKey(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := remoteSettings(t, b, fake)
	keyFile := filepath.Join(b.dir, "data", "oauth.key")
	env := []string{"MCP_SETTINGS=" + settings}
	browser := append(browserEnv(t, ""), env...)

	shared := append([]string{"DATABASE_URL=postgres://mcpgram@127.0.0.1:9/mcpgram"}, browser...)
	_, errOut, code := b.run(shared, "mcp", "login", "remote")
	if code != 1 || !strings.Contains(errOut, "every instance") || !strings.Contains(errOut, "same random secret") {
		t.Errorf("mcp login on PostgreSQL without a key = %d\n%s; want a refusal saying the key must be shared", code, errOut)
	}
	if _, err := os.Stat(keyFile); err == nil {
		t.Errorf("a key file was made for PostgreSQL")
	}

	out, errOut, code := b.run(browser, "mcp", "login", "remote")
	if code != 0 || !strings.Contains(out, "signed in to remote") {
		t.Fatalf("mcp login without a key = %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, keyFile) {
		t.Errorf("mcp login did not say where it made the key (%s):\n%s", keyFile, errOut)
	}
	info, err := os.Stat(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode = %o, want 600", got)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil || len(strings.TrimSpace(string(key))) < 32 {
		t.Fatalf("key file holds %d characters, %v; want at least 32", len(strings.TrimSpace(string(key))), err)
	}

	out2, errOut2, code := b.run(env, "mcp", "call", "remote", "whoami")
	if code != 0 || strings.TrimSpace(out2) != "operator" {
		t.Fatalf("mcp call after login = %d %q\n%s", code, out2, errOut2)
	}
	if strings.Contains(errOut2, "oauth.key") {
		t.Errorf("the second command spoke of the key file again:\n%s", errOut2)
	}
	if again, _ := os.ReadFile(keyFile); string(again) != string(key) {
		t.Errorf("the key file changed")
	}
	if c := fake.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations = %d, want 1", c.Authorizations)
	}
	for _, text := range []string{out, errOut, out2, errOut2} {
		if strings.Contains(text, strings.TrimSpace(string(key))) {
			t.Errorf("the key reached the output:\n%s", text)
		}
	}

	// The operator's key wins: the sign-in sealed with the file's does not open.
	_, errOut3, code := b.run(append([]string{"OAUTH_KEY=operator-key-0123456789-0123456789"}, env...), "mcp", "call", "remote", "whoami")
	if code == 0 || !strings.Contains(errOut3, "mcpgram mcp login remote") {
		t.Errorf("mcp call with another OAUTH_KEY = %d\n%s; want a failure saying to sign in", code, errOut3)
	}
}

// `mcpgram mcp logout` ends the operator's sign-in: the tokens are
// revoked at the authorization server and deleted, so the next command
// finds no sign-in; a second logout has nothing to do; a server that is
// not in the settings is a usage error; and a revocation that fails exits 1
// with the sign-in deleted all the same.
func TestMCPLogout(t *testing.T) {
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	settings := remoteSettings(t, b, fake)
	env := []string{"OAUTH_KEY=operator-key-0123456789-0123456789", "MCP_SETTINGS=" + settings}
	login := func() {
		t.Helper()
		if out, errOut, code := b.run(append(env, browserEnv(t, "")...), "mcp", "login", "remote"); code != 0 {
			t.Fatalf("mcp login = %d\n%s\n%s", code, out, errOut)
		}
	}
	login()
	out, errOut, code := b.run(env, "mcp", "logout", "remote")
	if code != 0 || !strings.Contains(out, "signed out of remote") || !strings.Contains(out, "revoked") {
		t.Fatalf("mcp logout = %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got := fake.Revoked(); len(got) != 2 || got[0].Hint != "refresh_token" || got[1].Hint != "access_token" || !got[0].Known || !got[1].Known {
		t.Errorf("revocations = %+v; want the refresh and access tokens", got)
	}
	if _, errOut, code := b.run(env, "mcp", "call", "remote", "whoami"); code == 0 || !strings.Contains(errOut, "mcpgram mcp login remote") {
		t.Errorf("mcp call after logout = %d\n%s; want a failure saying to sign in", code, errOut)
	}
	if out, _, code := b.run(env, "mcp", "logout", "remote"); code != 0 || !strings.Contains(out, "not signed in to remote") {
		t.Errorf("second logout = %d %q; want nothing to do", code, out)
	}
	if _, errOut, code := b.run(env, "mcp", "logout", "nosuch"); code != 2 || !strings.Contains(errOut, "nosuch") {
		t.Errorf("logout of an unknown server = %d\n%s", code, errOut)
	}
	if _, _, code := b.run(env, "mcp", "logout"); code != 2 {
		t.Errorf("logout without SERVER exits %d, want 2", code)
	}

	login()
	fake.SetRevokeFault(oauthfake.RevokeErrors)
	out, errOut, code = b.run(env, "mcp", "logout", "remote")
	if code != 1 || !strings.Contains(out, "signed out of remote") || !strings.Contains(errOut, "did not revoke") {
		t.Errorf("logout with a failing revocation = %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if out, _, code := b.run(env, "mcp", "logout", "remote"); code != 0 || !strings.Contains(out, "not signed in") {
		t.Errorf("logout after the failed revocation = %d %q; want the sign-in gone", code, out)
	}
	for _, tok := range fake.Tokens() {
		if strings.Contains(out+errOut, tok) {
			t.Errorf("a token reached the output")
		}
	}

	// Kept with the sign-in: the metadata says so before it.
	fake.SetRevokeFault(oauthfake.NoEndpoint)
	login()
	if out, errOut, code := b.run(env, "mcp", "logout", "remote"); code != 0 || !strings.Contains(out, "offers no revocation") {
		t.Errorf("logout without a revocation endpoint = %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// `mcpgram mcp list` prints each status of docs/mcp.md's table, and the
// table lists exactly those: it names why each server is down and the
// fix, counts it failed (exit 1), and says each reason once, without the
// MCP client's repeated words: a remote server that needs a sign-in, one
// that refuses connections, one that answers 500, a local one that does
// not start, and, once signed in, a kept sign-in read with another
// OAUTH_KEY, whose warning is printed once. `mcp call` says the same.
func TestMCPListStatuses(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	fake := oauthfake.Start(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	maintenance := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
	}))
	t.Cleanup(maintenance.Close)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"remote":      map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 20},
		"down":        map[string]any{"type": "streamableHttp", "url": "http://" + closed + "/mcp", "timeout": 20},
		"maintenance": map[string]any{"type": "streamableHttp", "url": maintenance.URL + "/mcp", "timeout": 20},
		"broken":      map[string]any{"command": "./no-such-server"},
		"off":         map[string]any{"command": testenv.Bundled(t, "mcp-clock"), "disabled": true},
	})
	env := []string{"MCP_SETTINGS=" + settings}
	unreachable := regexp.MustCompile(`(?m)^down +unreachable: connection refused \(` + regexp.QuoteMeta(closed) + `\)$`)
	printed := map[string]bool{}

	out, errOut, code := b.run(env, "mcp", "list")
	if code != 1 || !strings.Contains(errOut, "4 of 5 servers failed") {
		t.Errorf("mcp list = %d\n%s; want 1, saying 4 of 5 servers failed", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^remote +needs sign-in: run mcpgram mcp login remote$`).MatchString(out) || !unreachable.MatchString(out) ||
		!regexp.MustCompile(`(?m)^maintenance +restarting: initialize: request failed with status 500: down for maintenance$`).MatchString(out) {
		t.Errorf("mcp list:\n%s\nwant remote needing a sign-in, down unreachable and maintenance restarting", out)
	}
	statuses(out, printed)
	if _, errOut, code := b.run(env, "mcp", "call", "down", "whoami"); code != 1 || !strings.Contains(errOut, `mcpgram: server "down": unreachable: connection refused (`+closed+")") {
		t.Errorf("mcp call down = %d\n%s; want 1, saying it is unreachable", code, errOut)
	}

	if out, errOut, code := b.run(append(env, browserEnv(t, "")...), "mcp", "login", "remote"); code != 0 {
		t.Fatalf("mcp login = %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = b.run(env, "mcp", "list")
	if code != 1 || !strings.Contains(lineOf(out, "remote"), "running, 1 tool") {
		t.Errorf("mcp list once signed in = %d\n%s\n%s; want remote running", code, out, errOut)
	}
	statuses(out, printed)
	out, errOut, code = b.run(append(env, "OAUTH_KEY=operator-key-0123456789-0123456789"), "mcp", "list")
	if code != 1 || !regexp.MustCompile(`(?m)^remote +sign-in unusable: OAUTH_KEY changed\? Set it back, or run mcpgram mcp login remote$`).MatchString(out) || !unreachable.MatchString(out) {
		t.Errorf("mcp list with another OAUTH_KEY = %d\n%s\n%s; want remote's sign-in unusable", code, out, errOut)
	}
	statuses(out, printed)
	if n := strings.Count(errOut, "does not open with this OAUTH_KEY"); n != 1 {
		t.Errorf("the warning of the key was printed %d times, want once:\n%s", n, errOut)
	}
	for _, twice := range []string{"failed to send request: failed to send request", "transport error"} {
		if strings.Contains(out+errOut, twice) {
			t.Errorf("mcp list says %q:\n%s\n%s", twice, out, errOut)
		}
	}

	documented := map[string]bool{}
	for _, row := range tableRows(t, docPage(t, "mcp.md"), "### Statuses") {
		if m := codeSpanRE.FindStringSubmatch(row[0]); m != nil {
			documented[statusKind(m[1])] = true
		}
	}
	for _, c := range []mcpgram.Cause{mcpgram.CauseSignIn, mcpgram.CauseKey, mcpgram.CauseUnreachable} {
		if !documented[string(c)] {
			t.Errorf("docs/mcp.md's statuses lack %q", c)
		}
	}
	if !maps.Equal(printed, documented) {
		t.Errorf("mcp list printed the statuses %v; docs/mcp.md lists %v", slices.Sorted(maps.Keys(printed)), slices.Sorted(maps.Keys(documented)))
	}
}

// serverLineRE is a server's line of mcp list: its name, and its status
// after two spaces or more.
var serverLineRE = regexp.MustCompile(`(?m)^(\S+) {2,}(\S.*)$`)

// statuses adds the kind of each server's status that out prints to seen.
func statuses(out string, seen map[string]bool) {
	for _, m := range serverLineRE.FindAllStringSubmatch(out, -1) {
		seen[statusKind(m[2])] = true
	}
}

// statusKind is a status without its details: "running", "needs sign-in".
func statusKind(status string) string {
	if i := strings.IndexAny(status, ":,;"); i >= 0 {
		return status[:i]
	}
	return status
}

// remoteSettings writes a settings file of one remote server, "remote",
// the protected server fake serves.
func remoteSettings(t *testing.T, b *binary, fake *oauthfake.Server) string {
	t.Helper()
	return testenv.WriteSettings(t, b.dir, map[string]any{
		"remote": map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 20},
	})
}

// browserEnv makes the test binary the browser of mcpgram mcp login and of
// the sign-ins mcpgram asks for, signing in as account when it is not "".
func browserEnv(t *testing.T, account string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"MCPGRAM_TEST_BROWSER=1", "BROWSER=" + self}
	if account != "" {
		env = append(env, "MCPGRAM_TEST_ACCOUNT="+account)
	}
	return env
}
