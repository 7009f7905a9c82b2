// Package testenv gives tests the real parts they run against: the bundled
// MCP servers built from this module, and the pinned npm reference server.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
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
// mcp-servers/). The binaries are built once for a given state of the
// sources and shared by every test process: go test runs packages in
// parallel, and Go's build cache does not keep linked binaries.
func Bundled(t testing.TB, name string) string {
	t.Helper()
	root := Root(t)
	buildOnce.Do(func() {
		buildDir, buildOut, buildErr = buildServers(root)
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
	node, dir := NPMPackage(t, "@modelcontextprotocol/server-everything")
	return node, []string{filepath.Join(dir, "dist", "index.js"), "stdio"}
}

// NPMPackage returns the path of node and the folder of pkg, one of the
// pinned packages of testdata/npm. It skips the test, loudly, only where
// node or npm is absent; where they are present but pkg is not installed,
// the test fails and says how to install it.
func NPMPackage(t testing.TB, pkg string) (node, dir string) {
	t.Helper()
	dir = filepath.Join(Root(t), "testdata", "npm", "node_modules", filepath.FromSlash(pkg))
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if _, npmErr := exec.LookPath("npm"); npmErr != nil {
			t.Skip("SKIPPED LOUDLY: npm is not installed, so " + pkg + " cannot run; install Node.js and run `make test-deps`")
		}
		t.Fatalf("%s is not installed: run `make test-deps` (%v)", pkg, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: node is not installed, so " + pkg + " cannot run")
	}
	return node, dir
}

// buildServers builds ./mcp-servers/... into a folder of the temp dir named
// after a hash of the sources, unless an earlier process already did.
// The build goes to a private folder first and is renamed into place, so
// a concurrent process never sees half a build.
func buildServers(root string) (dir string, out []byte, err error) {
	sum, err := sourceHash(root)
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(os.TempDir(), "mcpgram-servers-"+sum)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil, nil
	}
	tmp, err := os.MkdirTemp("", "mcpgram-build-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command("go", "build", "-o", tmp+string(filepath.Separator), "./mcp-servers/...")
	cmd.Dir = root
	if out, err = cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", out, err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race; its build is as good as ours.
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(filepath.Join(dir, ".complete")); statErr != nil {
			return "", nil, err
		}
	}
	return dir, nil, nil
}

// sourceHash digests go.mod, go.sum and every file under mcp-servers/.
func sourceHash(root string) (string, error) {
	h := sha256.New()
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	err := filepath.WalkDir(filepath.Join(root, "mcp-servers"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
