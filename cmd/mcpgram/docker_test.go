package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// No Docker engine runs where the tests do, so the Dockerfile is linted
// here: its build step must be the `make build` that `make test` runs, and
// its runtime stage must keep the promises docs/operations.md (Docker)
// makes.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	root := testenv.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(stages) != 2 {
		t.Fatalf("Dockerfile has %d stages, want a build and a runtime stage", len(stages))
	}
	for _, s := range stages {
		if img := s[1]; !strings.Contains(img, ":") || strings.HasSuffix(img, ":latest") {
			t.Errorf("base image %q is not pinned to a tag", img)
		}
	}
	runtime := df[strings.LastIndex(df, "\nFROM "):]
	checks := []struct {
		name string
		ok   bool
	}{
		{"builds with make build", regexp.MustCompile(`(?m)^RUN make build\b`).MatchString(df)},
		{"runtime has Node.js for npx servers", strings.Contains(stages[1][1], "node")},
		{"copies every binary of bin/", strings.Contains(runtime, "COPY --from=build /src/bin/ /usr/local/bin/")},
		{"runs as a non-root user", regexp.MustCompile(`(?m)^USER\s+[a-z]`).MatchString(runtime) && !regexp.MustCompile(`(?m)^USER\s+root`).MatchString(runtime)},
		{"keeps data in a /data volume", strings.Contains(runtime, `VOLUME ["/data"]`)},
		{"reads the settings from a mounted path", strings.Contains(runtime, "MCP_SETTINGS=/config/mcp-settings.json")},
		{"starts the bot", strings.Contains(runtime, `"mcpgram"`) && strings.Contains(runtime, `CMD ["run"]`)},
		{"checks its health", strings.Contains(runtime, `HEALTHCHECK`) && strings.Contains(runtime, `CMD ["mcpgram", "health"]`)},
		{"owns what named volumes mount over", strings.Contains(runtime, "chown mcpgram:mcpgram /data /config /home/mcpgram/.cache /home/mcpgram/.cache/mcpgram")},
		{"installs bubblewrap for the servers' sandbox", regexp.MustCompile(`apt-get install[^\n]*\bbubblewrap\b`).MatchString(runtime)},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("Dockerfile: not true that it %s", c.name)
		}
	}

	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "CGO_ENABLED=0 $(GO) build") || !strings.Contains(string(mk), "./cmd/... ./mcp-servers/...") {
		t.Error("make build no longer builds every binary with CGO_ENABLED=0, which the image relies on")
	}

	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".env\n", "data/\n", "bin/\n"} {
		if !strings.Contains(string(ignore), want) {
			t.Errorf(".dockerignore lacks %q: COPY . . would carry it into the image", strings.TrimSpace(want))
		}
	}

	checkCompose(t, root)
	checkScaleProfile(t, root)
}

// The compose file's "scale" profile: PostgreSQL, two replicas in webhook
// mode on it, sharing the settings volume (so a /servers toggle written by
// one reaches the other's watcher), and a proxy in front of both; none of
// it starts without the profile.
func checkScaleProfile(t *testing.T, root string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Profiles    []string       `yaml:"profiles"`
		Environment map[string]any `yaml:"environment"`
		Volumes     []string       `yaml:"volumes"`
		Image       string         `yaml:"image"`
	}
	var file struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if p := file.Services["mcpgram"].Profiles; len(p) != 0 {
		t.Errorf("the default service has profiles %v: docker compose up would not start it", p)
	}
	pg, ok := file.Services["postgres"]
	if !ok || !slices.Equal(pg.Profiles, []string{"scale"}) || !strings.HasPrefix(pg.Image, "postgres:") {
		t.Errorf("postgres service = %+v, want postgres in the scale profile", pg)
	}
	var url string
	for _, name := range []string{"bot-1", "bot-2"} {
		svc, ok := file.Services[name]
		if !ok {
			t.Errorf("no %s service", name)
			continue
		}
		if !slices.Equal(svc.Profiles, []string{"scale"}) {
			t.Errorf("%s profiles = %v, want [scale]", name, svc.Profiles)
		}
		if svc.Environment["TELEGRAM_MODE"] != "webhook" {
			t.Errorf("%s is not in webhook mode", name)
		}
		u, _ := svc.Environment["DATABASE_URL"].(string)
		if !strings.Contains(u, "@postgres:5432/") || (url != "" && u != url) {
			t.Errorf("%s DATABASE_URL = %q, want the postgres service's, the same for both", name, u)
		}
		url = u
		if !slices.Contains(svc.Volumes, "config:/config") {
			t.Errorf("%s does not share the config volume: %v", name, svc.Volumes)
		}
	}
	// The proxy's own config is run by TestScaleProxyPublishesOnlyTheWebhook.
	path, _ := proxyConfig(t, root)
	conf, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "bot-1:9090") || !strings.Contains(string(conf), "bot-2:9090") {
		t.Errorf("%s does not proxy to both replicas' port 9090", path)
	}
}

// The compose file as shipped works on a fresh Linux host: named volumes
// (created owned by the image's user, where bind-mounted host folders are
// owned by the host's and leave the database uncreatable), a stop grace
// beyond the bot's own 20 s, the health check, and a kept npm cache.
func checkCompose(t *testing.T, root string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			EnvFile         string                  `yaml:"env_file"`
			Environment     map[string]any          `yaml:"environment"`
			Volumes         []string                `yaml:"volumes"`
			StopGracePeriod string                  `yaml:"stop_grace_period"`
			Healthcheck     struct{ Test []string } `yaml:"healthcheck"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	svc, ok := file.Services["mcpgram"]
	if !ok {
		t.Fatal("docker-compose.yml has no mcpgram service")
	}
	if svc.EnvFile != ".env" {
		t.Errorf("env_file = %q, want .env", svc.EnvFile)
	}
	mounts := map[string]string{}
	for _, v := range svc.Volumes {
		src, dst, _ := strings.Cut(v, ":")
		mounts[dst] = src
		if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
			t.Errorf("volume %q bind-mounts a host folder, which the image's user (uid 10001) may not write", v)
		} else if _, declared := file.Volumes[src]; !declared {
			t.Errorf("volume %q is not declared under volumes:", src)
		}
	}
	for _, dst := range []string{"/data", "/config", "/home/mcpgram/.cache/mcpgram"} {
		if mounts[dst] == "" {
			t.Errorf("nothing is mounted at %s", dst)
		}
	}
	if svc.Environment["DATABASE_PATH"] != "/data/mcpgram.db" || svc.Environment["MCP_SETTINGS"] != "/config/mcp-settings.json" {
		t.Errorf("environment = %v, want the database in /data and the settings in /config", svc.Environment)
	}
	grace, err := time.ParseDuration(svc.StopGracePeriod)
	if err != nil || grace <= 20*time.Second {
		t.Errorf("stop_grace_period = %q, want more than the bot's 20 s shutdown grace", svc.StopGracePeriod)
	}
	if strings.Join(svc.Healthcheck.Test, " ") != "CMD mcpgram health" {
		t.Errorf("healthcheck = %v, want mcpgram health", svc.Healthcheck.Test)
	}
}
