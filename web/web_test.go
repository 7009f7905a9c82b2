package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestEndpoints(t *testing.T) {
	m := metrics.New()
	m.ToolCall("files", "read", "ok", 0)
	dbErr := error(nil)
	probe := web.NewRecentProbe("telegram", 1<<62)
	s := web.New("127.0.0.1:0", web.Options{
		Metrics: m,
		Health:  []web.Check{{Name: "database", Check: func(context.Context) error { return dbErr }}},
		Ready:   []web.Check{{Name: "telegram", Check: probe.Check}},
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + s.Addr()

	code, body := get(t, base+"/metrics")
	if code != 200 || !strings.Contains(body, `mcpgram_tool_calls_total{server="files",status="ok",tool="read"} 1`) || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics = %d:\n%s", code, body)
	}

	check := func(path string, want int, wantChecks map[string]string) {
		t.Helper()
		code, body := get(t, base+path)
		var rep struct {
			Status string
			Checks map[string]string
		}
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatalf("%s: %v in %q", path, err, body)
		}
		if code != want {
			t.Errorf("%s = %d %s, want %d", path, code, body, want)
		}
		for k, v := range wantChecks {
			if rep.Checks[k] != v {
				t.Errorf("%s: check %s = %q, want %q", path, k, rep.Checks[k], v)
			}
		}
	}
	check("/healthz", 200, map[string]string{"database": "ok"})
	check("/readyz", 503, map[string]string{"database": "ok", "telegram": "telegram: no success yet"})
	probe.OK()
	check("/readyz", 200, map[string]string{"telegram": "ok"})
	dbErr = errors.New("database is closed")
	check("/healthz", 503, map[string]string{"database": "database is closed"})
	check("/readyz", 503, nil)
}

func TestAddressInUse(t *testing.T) {
	a := web.New("127.0.0.1:0", web.Options{})
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	b := web.New(a.Addr(), web.Options{})
	if err := b.Start(); err == nil || !strings.Contains(err.Error(), "HTTP_LISTEN") {
		b.Close(context.Background())
		t.Fatalf("a second Start on %s = %v, want an error naming HTTP_LISTEN", a.Addr(), err)
	}
}

// /healthz and /readyz on a real SQLite store: healthy while it is open,
// 503 naming the database once it is closed.
func TestHealthOfAClosedDatabase(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "mcpgram.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := web.New("127.0.0.1:0", web.Options{Health: []web.Check{{Name: "database", Check: db.Ping}}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, "http://"+s.Addr()+path); code != http.StatusOK {
			t.Errorf("%s with the database open = %d %s, want 200", path, code, body)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body := get(t, "http://"+s.Addr()+path)
		var rep struct{ Checks map[string]string }
		if err := json.Unmarshal([]byte(body), &rep); err != nil {
			t.Fatalf("%s: %v in %q", path, err, body)
		}
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(rep.Checks["database"], "database") {
			t.Errorf("%s with the database closed = %d %s, want 503 naming the database", path, code, body)
		}
	}
}

// A host of its own (HandleHost) gets its requests, and none of them
// reach the other routes, /metrics among them; other hosts get those.
func TestHandleHost(t *testing.T) {
	s := web.New("127.0.0.1:0", web.Options{Metrics: metrics.New()})
	s.HandleHost(func(host string) bool { return strings.HasPrefix(host, "apps.") }, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "apps: "+r.URL.Path, http.StatusTeapot)
	}))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for _, tc := range []struct {
		host string
		code int
		body string
	}{
		{"apps.example.com", http.StatusTeapot, "apps: /metrics"},
		{"bot.example.com", http.StatusOK, "go_goroutines"},
	} {
		req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/metrics", nil)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.body) {
			t.Errorf("/metrics at %s: %d %.80q, want %d and %q", tc.host, resp.StatusCode, body, tc.code, tc.body)
		}
	}
}
