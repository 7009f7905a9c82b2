package hub

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// systemDirs are the read-only parts of the system every server sees:
// programs, libraries and configuration. Those that are symlinks (/bin on
// a merged /usr) stay symlinks.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// hiddenSystemFiles are parts of /etc no server needs and only root can
// read: a server run by a bot that runs as root would otherwise read them.
var hiddenSystemFiles = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private", "/etc/ssh/ssh_host_*_key"}

// packageCaches are the folders a launcher of packages writes its
// downloads to, by the command's name; each is an environment variable
// that moves it, or else a path under the home folder.
var packageCaches = map[string][]cacheDir{
	"npx":  {{env: "npm_config_cache", home: ".npm"}},
	"npm":  {{env: "npm_config_cache", home: ".npm"}},
	"uvx":  {{env: "UV_CACHE_DIR", home: ".cache/uv"}, {env: "UV_PYTHON_INSTALL_DIR", home: ".local/share/uv"}},
	"uv":   {{env: "UV_CACHE_DIR", home: ".cache/uv"}, {env: "UV_PYTHON_INSTALL_DIR", home: ".local/share/uv"}},
	"bunx": {{env: "BUN_INSTALL", home: ".bun"}},
	"bun":  {{env: "BUN_INSTALL", home: ".bun"}},
}

type cacheDir struct{ env, home string }

// shells are the commands whose -c argument is a command line, in which
// paths are named too.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh"}

// notNamed are the folders the sandbox gives every server its own of, so
// that a path into them names nothing to show.
var notNamed = []string{"/dev", "/proc", "/sys"}

// scriptExts mark a file named in args that an interpreter runs: it needs
// its project (node_modules, a virtual environment) to read, not its
// folder to write.
var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".py"}

// projectMarkers are the files that mark the root of a script's project.
var projectMarkers = []string{"package.json", "pyproject.toml", "requirements.txt", "setup.py"}

// A view is what of the filesystem a sandboxed server sees, beside the
// system's read-only parts, its own /proc and /dev, and a private /tmp.
type view struct {
	ro, rw []string // host paths, absolute and clean, seen where they are
	// cwd is the server's working folder; ownCwd says the entry chose it,
	// and it is then one of rw. Otherwise it is the settings file's
	// folder, which the server sees only as far as rw and ro show it.
	cwd    string
	ownCwd bool
	home   string
	// protected are the files, existing, that no server may see at all;
	// data those that are changed in place rather than replaced (the
	// bot's own data, the system's secrets), which a cover hides.
	protected, data []string
	network         bool
}

// newView works out the view of server cfg, whose command was found at
// command, with child's environment env. It creates the folders a named
// file would be created in, and the package caches, as the server would
// itself, so that they can be shown to it.
func newView(cfg config, command string, env map[string]string, protected, data []string) view {
	v := view{network: !cfg.sandbox.noNetwork, home: env["HOME"]}
	v.cwd, v.ownCwd = cfg.workDir(), cfg.cwd != ""
	switch {
	case v.ownCwd:
		v.addRW(v.cwd)
	case v.cwd == "":
		v.cwd, _ = os.Getwd() // no settings file's folder: the bot's
	}
	for _, dir := range filepath.SplitList(env["PATH"]) {
		// Not / or the home folder, which would show it all.
		if dir = filepath.Clean(dir); filepath.IsAbs(dir) && dir != "/" && dir != v.home {
			v.addRO(installPrefix(dir))
		}
	}
	v.name(command, true)
	if real := resolved(command); real != command {
		// A link to the program elsewhere, as npx is to npm's script.
		v.name(real, true)
	}
	shell := slices.Contains(shells, filepath.Base(command))
	for i, a := range cfg.args {
		if shell && i > 0 && cfg.args[i-1] == "-c" {
			v.script(a)
			continue
		}
		if p, ok := v.pathIn(a); ok {
			v.name(p, false)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.env)) {
		if p, ok := v.pathIn(cfg.env[k]); ok {
			v.name(p, false)
		}
	}
	for _, c := range packageCaches[filepath.Base(cfg.command)] {
		dir := env[c.env]
		if dir == "" && v.home != "" {
			dir = filepath.Join(v.home, c.home)
		}
		if filepath.IsAbs(dir) && os.MkdirAll(dir, 0o700) == nil {
			v.addRW(dir)
		}
	}
	for _, p := range cfg.sandbox.paths {
		v.addRW(p)
	}
	for _, p := range cfg.sandbox.readOnly {
		v.addRO(p)
	}
	v.protected, v.data = existing(protected), existing(data)
	for _, pattern := range hiddenSystemFiles {
		matches, _ := filepath.Glob(pattern)
		v.data = append(v.data, matches...)
	}
	return v
}

// existing returns the paths of ps that exist.
func existing(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// hidden is every path v keeps from the server.
func (v view) hidden() []string { return slices.Concat(v.protected, v.data) }

// check refuses a view that would let the server write in a folder that
// holds a protected file: such a file may be replaced while the server
// runs, and no sandbox can keep a replaced file out of a folder it shows.
func (v view) check() error {
	for _, dir := range v.rw {
		for _, p := range v.protected {
			if e := exposures(dir, []string{p}); len(e) > 0 {
				return fmt.Errorf("%w: it may write in %s, which holds %s, a file of the bot's that a sandbox can only hide from a server that cannot write beside it: give the server a folder of its own (or turn its sandbox off, if it may see the file)", errNoSandbox, dir, p)
			}
		}
	}
	return nil
}

// pathIn reads a path out of an argument or an env value: an absolute
// path, one that starts with ./, ../ or ~/, one with a slash that exists
// relative to the working folder, or any of these after --flag=. It is
// made absolute against the server's working folder, as the server would.
func (v *view) pathIn(s string) (string, bool) {
	if strings.HasPrefix(s, "-") {
		_, after, ok := strings.Cut(s, "=")
		if !ok {
			return "", false
		}
		s = after
	}
	switch {
	case s == "":
		return "", false
	case s == "~" || strings.HasPrefix(s, "~/"):
		if v.home == "" {
			return "", false
		}
		return filepath.Join(v.home, strings.TrimPrefix(s, "~")), true
	case filepath.IsAbs(s):
		return filepath.Clean(s), true
	case s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../"):
		return filepath.Join(v.cwd, s), true
	case strings.Contains(s, "/") && !strings.Contains(s, "://"):
		p := filepath.Join(v.cwd, s)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// script shows the server the paths that a shell command line names and
// that exist: a file as a command, to run, a folder to use.
func (v *view) script(line string) {
	for _, word := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\n;&|<>()'\"`=", r) }) {
		p, ok := v.pathIn(word)
		if !ok {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			v.name(p, !fi.IsDir())
		}
	}
}

// name shows the server a path its settings name. A folder is its to use.
// A file inside node_modules needs its packages, and a script its project,
// to read. Any other file, or a path yet to be, is shown with its folder,
// where the server may create it and whatever goes beside it (a database's
// journal): the folder is created if it is missing, as the server would.
// A file right in / or the home folder is shown alone: its folder holds
// far more than the server needs. The command is only run, so it is shown
// read-only.
func (v *view) name(p string, command bool) {
	for _, d := range notNamed {
		if within(p, d) {
			return
		}
	}
	if i := strings.Index(p, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		v.addRO(p[:i+len("/node_modules")])
		return
	}
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		if command {
			v.addRO(p)
		} else {
			v.addRW(p)
		}
	case err == nil && (command || slices.Contains(scriptExts, filepath.Ext(p))):
		root := projectOf(filepath.Dir(p), v.home)
		if root == "/" || root == v.home {
			root = p // too much to show for one program: only it
		}
		v.addRO(root)
	default:
		dir := filepath.Dir(p)
		if dir == "/" || dir == v.home {
			// Too much to show for one file: only the file, created
			// empty if it is not there yet, so that it can be shown.
			if err != nil {
				if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					f.Close()
				}
			}
			v.addRW(p)
			return
		}
		if _, err := os.Stat(dir); err != nil && !v.system(dir) {
			_ = os.MkdirAll(dir, 0o750)
		}
		if _, err := os.Stat(dir); err == nil {
			v.addRW(dir)
		}
	}
}

// projectOf is the nearest of dir and its three closest parents that holds
// a project's marker, or dir itself; never / or the home folder, whatever
// they hold.
func projectOf(dir, home string) string {
	d := dir
	for range 4 {
		if d == "/" || d == home {
			break
		}
		for _, m := range projectMarkers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		d = filepath.Dir(d)
	}
	return dir
}

// installPrefix is the installation a folder of PATH belongs to: for
// PREFIX/bin beside PREFIX/lib (Node.js under nvm, ~/.local), PREFIX,
// since programs there are often links into PREFIX/lib; else dir itself.
func installPrefix(dir string) string {
	if filepath.Base(dir) != "bin" {
		return dir
	}
	prefix := filepath.Dir(dir)
	if fi, err := os.Stat(filepath.Join(prefix, "lib")); err == nil && fi.IsDir() && prefix != "/" {
		return prefix
	}
	return dir
}

// system reports whether p lies in the system's read-only parts.
func (v *view) system(p string) bool {
	for _, d := range systemDirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

func (v *view) addRO(p string) {
	if p != "" && !slices.Contains(v.ro, p) {
		v.ro = append(v.ro, filepath.Clean(p))
	}
}

func (v *view) addRW(p string) {
	if p != "" && !slices.Contains(v.rw, p) {
		v.rw = append(v.rw, filepath.Clean(p))
	}
}

// within reports whether path p is dir or lies beneath it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// resolved is p with its symlinks followed, or p where it cannot be.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// exposures returns where each protected path shows in a tree that host
// folder root shows at dest: beneath dest, by the path as written or as
// its symlinks resolve.
func exposures(root string, protected []string) []string {
	var out []string
	rr := resolved(root)
	for _, p := range protected {
		for _, cand := range []struct{ p, base string }{{p, root}, {resolved(p), rr}} {
			if within(cand.p, cand.base) {
				dest := filepath.Join(root, strings.TrimPrefix(cand.p, cand.base))
				if !slices.Contains(out, dest) {
					out = append(out, dest)
				}
			}
		}
	}
	return out
}
