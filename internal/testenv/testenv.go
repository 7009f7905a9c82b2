// Package testenv gives tests the real parts they run against: the bundled
// MCP servers built from this module, and the pinned npm reference server.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Root returns the module's root folder.
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

// Bundled returns the path of the named bundled server binary (a folder of
// mcp-servers/), built once per test process into a temporary folder.
func Bundled(t testing.TB, name string) string {
	t.Helper()
	root := Root(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcpgram-servers-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+string(filepath.Separator), "./mcp-servers/...")
		cmd.Dir = root
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build bundled servers: %v\n%s", buildErr, buildOut)
	}
	path := filepath.Join(buildDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("bundled server %q: %v", name, err)
	}
	return path
}

// BuildPackage builds one main package of this module (a path relative to
// the root, such as "./hub/testdata/crashy") into t's temp folder.
func BuildPackage(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = Root(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// Everything returns the command and arguments that start the pinned
// @modelcontextprotocol/server-everything over stdio. It skips the test,
// loudly, only where npm is absent; where npm is present but the server is
// not installed, the test fails and says how to install it.
func Everything(t testing.TB) (command string, args []string) {
	t.Helper()
	script := filepath.Join(Root(t), "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		if _, npmErr := exec.LookPath("npm"); npmErr != nil {
			t.Skip("SKIPPED LOUDLY: npm is not installed, so @modelcontextprotocol/server-everything cannot run; install Node.js and run `make test-deps`")
		}
		t.Fatalf("@modelcontextprotocol/server-everything is not installed: run `make test-deps` (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: node is not installed, so @modelcontextprotocol/server-everything cannot run")
	}
	return node, []string{script, "stdio"}
}
