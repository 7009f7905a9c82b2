package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/internal/testenv"
)

// No Docker engine runs where the tests do, so the Dockerfile is linted
// here: its build step must be the `make build` that `make test` runs, and
// its runtime stage must keep the promises README makes.
func TestDockerfile(t *testing.T) {
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

	compose, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"./data:/data", "./config:/config", "env_file: .env"} {
		if !strings.Contains(string(compose), want) {
			t.Errorf("docker-compose.yml lacks %q", want)
		}
	}
}
