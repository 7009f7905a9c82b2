package oauth_test

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Without OAUTH_KEY, a key file: nothing makes it but a sign-in; four
// processes that begin their first sign-in at once make one key between
// them, readable by its owner alone, said once in the log, with which
// each opens the sign-in one of them made; a key the operator sets wins
// over the file.
func TestKeyFile(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "data", oauth.KeyFileName)
	var log testenv.Buffer
	manager := func(key string) *oauth.Manager {
		t.Helper()
		m, err := oauth.New(oauth.Options{Store: e.open(t), Key: key, KeyFile: file, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	if _, err := get(t, manager(""), e); !errors.Is(err, mcpgram.ErrSignInRequired) {
		t.Errorf("request before any sign-in = %v, want ErrSignInRequired", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the key file after a request = %v; want none made", err)
	}

	ms := []*oauth.Manager{manager(""), manager(""), manager(""), manager("")}
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Go(func() {
			if _, _, err := m.Begin(t.Context(), oauth.Request{SignIn: mcpgram.SignIn{Server: "remote", ServerURL: e.fake.URL() + "/mcp"}}, "http://127.0.0.1:9/callback"); err != nil {
				t.Errorf("Begin: %v", err)
			}
		})
	}
	wg.Wait()
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("key file mode = %o, want 600", got)
	}
	if n := strings.Count(log.String(), "made a key"); n != 1 || !strings.Contains(log.String(), file) {
		t.Errorf("the log said %d times that it made a key, want once, naming %s:\n%s", n, file, log.String())
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("the key's folder holds %d files, want the key alone", len(entries))
	}

	ms[0].SetInteractive(oauth.Loopback(oauthfake.Browse))
	signIn(t, e, ms[0])
	for i, m := range ms[1:] {
		if code, err := get(t, m, e); err != nil || code != http.StatusOK {
			t.Errorf("process %d with the key file = %d, %v; want the sign-in opened", i+2, code, err)
		}
	}
	if _, err := get(t, manager(testKey), e); !errors.Is(err, mcpgram.ErrSignInRequired) {
		t.Errorf("request with OAUTH_KEY set = %v; want ErrSignInRequired (the file's sign-in does not open with the operator's key)", err)
	}
}
