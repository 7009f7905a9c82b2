package main_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// proxyConfig returns the config file the compose file's scale proxy
// mounts, and that proxy's service.
func proxyConfig(t *testing.T, root string) (path string, volumes []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Profiles []string `yaml:"profiles"`
			Volumes  []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	proxy, ok := file.Services["proxy"]
	if !ok || !slices.Equal(proxy.Profiles, []string{"scale"}) {
		t.Fatalf("no proxy service in the scale profile")
	}
	for _, v := range proxy.Volumes {
		if src, ok := strings.CutSuffix(v, ":/etc/caddy/Caddyfile:ro"); ok {
			return filepath.Join(root, src), proxy.Volumes
		}
	}
	t.Fatalf("the proxy mounts no Caddyfile: %v", proxy.Volumes)
	return "", nil
}

// The scale profile's proxy publishes only the webhook: Telegram's POST to
// /telegram and the MCP Apps' /apps/ reach a replica, under the host the
// request named (APPS_ORIGIN's pages are told apart by it), and /metrics,
// /healthz, /readyz and every other path or method get 404 without
// reaching one. The test runs Caddy
// (the proxy's image) on the very config the compose file mounts, the
// replicas' addresses swapped for two test servers.
func TestScaleProxyPublishesOnlyTheWebhookAndApps(t *testing.T) {
	t.Parallel()
	caddy, err := exec.LookPath("caddy")
	if err != nil {
		// CI (.ci/run) sets MCPGRAM_REQUIRE_CADDY, so there this fails.
		if os.Getenv("MCPGRAM_REQUIRE_CADDY") != "" {
			t.Fatal("caddy is not installed and MCPGRAM_REQUIRE_CADDY is set")
		}
		t.Skip("caddy is not installed (apt-get install caddy): the scale profile's proxy is not tested")
	}
	path, _ := proxyConfig(t, testenv.Root(t))
	conf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reached, hosts []string
	replica := func() string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			reached = append(reached, r.Method+" "+r.URL.Path)
			hosts = append(hosts, r.Host)
			mu.Unlock()
		}))
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	text := strings.NewReplacer("bot-1:9090", replica(), "bot-2:9090", replica(), ":8080", fmt.Sprintf(":%d", port)).Replace(string(conf))
	if !strings.Contains(text, fmt.Sprintf(":%d", port)) {
		t.Fatalf("%s does not listen on :8080, which the compose file publishes", path)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(caddy, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	do := func(method, path string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"update_id": 1}`))
		req.Host = "x.apps.example.com"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	testenv.Eventually(t, 30*time.Second, "the proxy to answer", func() bool { return do(http.MethodGet, "/") != 0 })
	published := []struct{ method, path string }{
		{"POST", "/telegram"}, {"GET", "/apps/t0k3n"}, {"GET", "/apps/t0k3n/frame"}, {"POST", "/apps/t0k3n/rpc"},
	}
	for _, r := range published {
		if code := do(r.method, r.path); code != http.StatusOK {
			t.Fatalf("%s %s through the proxy = %d, want the replica's 200\n%s", r.method, r.path, code, out.String())
		}
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/metrics"}, {"GET", "/healthz"}, {"GET", "/readyz"}, {"POST", "/metrics"}, {"GET", "/telegram"},
		{"POST", "/telegram/x"}, {"POST", "/telegramx"}, {"POST", "/"}, {"GET", "/../metrics"}, {"GET", "/%6detrics"},
		{"GET", "/apps/../metrics"}, {"GET", "/apps/%2e%2e/metrics"}, {"DELETE", "/apps/t0k3n"}, {"GET", "/appsx"},
	} {
		if code := do(r.method, r.path); code != http.StatusNotFound {
			t.Errorf("%s %s through the proxy = %d, want 404", r.method, r.path, code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, r := range published {
		want = append(want, r.method+" "+r.path)
	}
	if !slices.Equal(reached, want) {
		t.Errorf("the replicas were reached by %q, want only %q", reached, want)
	}
	// APPS_ORIGIN's pages are told apart from the bot's by their host.
	for _, h := range hosts {
		if h != "x.apps.example.com" {
			t.Errorf("a replica was asked for host %q, want the one the browser asked for, x.apps.example.com", h)
		}
	}
}
