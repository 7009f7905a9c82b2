package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

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
//
// The folder is one every user may reach, as an install's is: where the
// tests run as root, servers run as users of their own, and outside a
// bubblewrap sandbox (which makes the folders on the way itself) they
// need the way open. A checkout they cannot pass (one made in a folder
// of mode 0700, as mktemp -d makes) is copied, once per lock file, to the
// temp dir.
func NPMPackage(t testing.TB, pkg string) (node, dir string) {
	t.Helper()
	installed := filepath.Join(Root(t), "testdata", "npm", "node_modules")
	dir = filepath.Join(installed, filepath.FromSlash(pkg))
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
	if os.Geteuid() != 0 || openToOthers(installed) {
		return node, dir
	}
	npmCopy.once.Do(func() { npmCopy.dir, npmCopy.err = openCopy(installed) })
	if npmCopy.err != nil {
		t.Fatalf("copy the npm packages where every user may reach them: %v", npmCopy.err)
	}
	return node, filepath.Join(npmCopy.dir, filepath.FromSlash(pkg))
}

// npmCopy is this process's copy of the installed npm packages, where
// they need one.
var npmCopy struct {
	once sync.Once
	dir  string
	err  error
}

// openToOthers reports whether a user other than the owners may pass
// every folder on the way to dir.
func openToOthers(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil || st.Mode&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// openCopy copies the folder installed to one of the temp dir named after
// its lock file, readable by every user, unless an earlier process
// already did: a private folder first, renamed into place, so that a
// concurrent process never sees half a copy.
func openCopy(installed string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(installed, ".installed-lock"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(os.TempDir(), "mcpgram-npm-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return filepath.Join(dir, "node_modules"), nil
	}
	tmp, err := os.MkdirTemp("", "mcpgram-npm-copy-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if err := os.CopyFS(filepath.Join(tmp, "node_modules"), os.DirFS(installed)); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("copy %s: %w", installed, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(filepath.Join(dir, ".complete")); statErr != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "node_modules"), nil
}
