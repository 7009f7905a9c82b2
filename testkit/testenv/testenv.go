// Package testenv gives tests the real parts they run against, one way
// each: the bundled MCP servers and the test servers of hub/testdata,
// built once; the pinned npm reference server; a hub started on a settings
// file and closed when the test ends; a throwaway PostgreSQL cluster with a
// fresh database per test; a log buffer; a name server of made-up names and
// a port that counts who connects to it, for the network edges of sign-ins;
// and a wait for a condition with a deadline.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/hub/confine"
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

// A binaries is a set of main packages of this module, built once for a
// given state of their sources and shared by every test process: go test
// runs packages in parallel, and Go's build cache does not keep linked
// binaries.
type binaries struct {
	// pkgs is what go build is given (a pattern with ... skips testdata,
	// so those are named one by one); src is the folder whose files, with
	// go.mod and go.sum, decide whether a build is still current.
	pkgs []string
	src  string

	once sync.Once
	dir  string
	out  []byte
	err  error
}

var (
	bundled     = &binaries{pkgs: []string{"./mcp-servers/..."}, src: "mcp-servers"}
	testServers = &binaries{pkgs: []string{"./hub/testdata/echo", "./hub/testdata/raw", "./hub/testdata/hostile", "./hub/testdata/features", "./hub/testdata/tasks"}, src: filepath.Join("hub", "testdata")}
	realTools   = &binaries{pkgs: []string{"./testkit/realtools/server"}, src: filepath.Join("testkit", "realtools")}
)

// path returns the binary named name of the set, building the set first
// if no process has built it yet.
func (b *binaries) path(t testing.TB, name string) string {
	t.Helper()
	root := Root(t)
	b.once.Do(func() {
		b.dir, b.out, b.err = build(root, b.pkgs, b.src)
	})
	if b.err != nil {
		t.Fatalf("build %s: %v\n%s", b.pkgs, b.err, b.out)
	}
	path := filepath.Join(b.dir, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: no binary %q: %v", b.pkgs, name, err)
	}
	return path
}

// Bundled returns the path of the named bundled server binary (a folder of
// mcp-servers/), built once.
func Bundled(t testing.TB, name string) string {
	t.Helper()
	return bundled.path(t, name)
}

// TestServer returns the path of the named test server of hub/testdata
// ("echo", "raw", "hostile", "features" or "tasks"), built once.
func TestServer(t testing.TB, name string) string {
	t.Helper()
	return testServers.path(t, name)
}

// RealToolsEntry is the settings entry that serves the tools of the
// realtools server named server (see package realtools), the first n of
// them when n > 0, with the given tools auto-approved.
func RealToolsEntry(t testing.TB, server string, n int, autoApprove ...string) map[string]any {
	t.Helper()
	if autoApprove == nil {
		autoApprove = []string{}
	}
	args := []string{"-server", server}
	if n > 0 {
		args = append(args, "-n", strconv.Itoa(n))
	}
	return map[string]any{"command": realTools.path(t, "server"), "args": args, "autoApprove": autoApprove}
}

var packages = struct {
	sync.Mutex
	m map[string]*binaries
}{m: map[string]*binaries{}}

// BuildPackage returns the path of one main package of this module (a
// path relative to the root, such as "./cmd/mcpgram"), built once for a
// given state of the module's sources.
func BuildPackage(t testing.TB, pkg string) string {
	t.Helper()
	packages.Lock()
	b, ok := packages.m[pkg]
	if !ok {
		pkgs := []string{pkg}
		if pkg == "./cmd/mcpgram" {
			// mcpgram finds the program its servers start through beside it.
			pkgs = append(pkgs, "./cmd/mcpgram-confine")
		}
		b = &binaries{pkgs: pkgs, src: "."}
		packages.m[pkg] = b
	}
	packages.Unlock()
	return b.path(t, filepath.Base(pkg))
}

// build builds pkgs into a folder of the temp dir named after a hash of
// the sources under src (see cached).
func build(root string, pkgs []string, src string) (dir string, out []byte, err error) {
	return cached(root, pkgs, src, func(dir string) ([]byte, error) {
		cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
		cmd.Dir = root
		return cmd.CombinedOutput()
	})
}

// cached runs make into a folder of the temp dir named after a hash of
// key and the sources under src, unless an earlier process already did.
// make writes to a private folder first, renamed into place once it
// succeeded, so a concurrent process never sees half its work.
func cached(root string, key []string, src string, make func(dir string) ([]byte, error)) (dir string, out []byte, err error) {
	sum, err := sourceHash(root, key, src)
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(os.TempDir(), "mcpgram-bin-"+sum)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil, nil
	}
	tmp, err := os.MkdirTemp("", "mcpgram-build-")
	if err != nil {
		return "", nil, err
	}
	// Open to every user, as an installed program is: where the tests
	// run as root, servers run as users of their own.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", nil, err
	}
	if out, err = make(tmp); err != nil {
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

// MakeBuild returns the folder that `make build` filled with VERSION set
// to version: run once for a given state of the module's sources (the
// Makefile among them) and version, as the test binaries are built.
func MakeBuild(t testing.TB, version string) string {
	t.Helper()
	root := Root(t)
	dir, out, err := cached(root, []string{"make build", version}, ".", func(dir string) ([]byte, error) {
		cmd := exec.Command("make", "-s", "build", "BIN="+dir, "VERSION="+version)
		cmd.Dir = root
		return cmd.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	return dir
}

// sourceHash digests the packages' names, go.mod, go.sum and every file
// under src but those of node_modules and hidden ones.
func sourceHash(root string, pkgs []string, src string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, pkgs)
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	top := filepath.Join(root, src)
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != top && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
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
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the walk: not a source
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// OpenDir returns a new temporary folder, as t.TempDir does, that every
// user may pass, as the folders of an install are: where the tests run as
// root, servers run as users of their own, and outside a bubblewrap
// sandbox (which makes the folders on the way itself) they need the way
// open. What the test puts in it keeps the modes it gives.
func OpenDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// CacheDir is where tests keep servers' package caches (hub.Options'
// CacheDir): one folder for every test process, kept between runs so
// that npx downloads a package once.
func CacheDir() string {
	return filepath.Join(os.TempDir(), "mcpgram-test-caches")
}

// Confine returns the path of mcpgram-confine, the program every stdio
// server starts through (hub.Options' Confine), built once.
func Confine(t testing.TB) string {
	t.Helper()
	return confineBin.path(t, "mcpgram-confine")
}

// PutConfineOnPath builds mcpgram-confine and puts its folder first on
// PATH, where a hub made without testenv (hub.New, or mcpgram's Main run in
// the test's process) finds it; else such a hub starts its servers through
// the test binary itself, which takes a tenth of a second to ready all it
// links at each start. A TestMain calls it.
func PutConfineOnPath() error { return putOnPath(confineBin) }

// PutBundledOnPath builds the bundled servers (mcp-memory, mcp-calculator,
// mcp-clock) and puts their folder first on PATH, where settings name
// them by their bare names, as mcpgram's own mcp-settings.json does. A
// TestMain whose examples start them calls it.
func PutBundledOnPath() error { return putOnPath(bundled) }

// putOnPath builds b, once, and puts its folder first on PATH.
func putOnPath(b *binaries) error {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	b.once.Do(func() {
		b.dir, b.out, b.err = build(root, b.pkgs, b.src)
	})
	if b.err != nil {
		return fmt.Errorf("build %s: %w\n%s", b.pkgs, b.err, b.out)
	}
	return os.Setenv("PATH", b.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// confineBin is mcpgram-confine, built once.
var confineBin = &binaries{pkgs: []string{"./cmd/mcpgram-confine"}, src: "."}

// Prepare readies a test binary whose tests start MCP servers or read
// PDFs; its TestMain calls it first. Each server starts through a program
// that runs confine.Main (see package confine), and the PDF reader is a
// child that runs media.PDFMain, either of which this binary may be asked
// to be; and mcpgram-confine is put on PATH (see PutConfineOnPath).
func Prepare() {
	confine.Main(os.Args)
	media.PDFMain(os.Args)
	if err := PutConfineOnPath(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
