package hub

import (
	"errors"
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
// downloads to, by the command's name: each an environment variable that
// moves it, which the hub points at a folder of the server's own (see
// cacheFolder) unless the entry sets it.
var packageCaches = map[string][]cacheDir{
	"npx":  {{"npm_config_cache", "npm"}},
	"npm":  {{"npm_config_cache", "npm"}},
	"uvx":  {{"UV_CACHE_DIR", "uv"}, {"UV_PYTHON_INSTALL_DIR", "uv-python"}},
	"uv":   {{"UV_CACHE_DIR", "uv"}, {"UV_PYTHON_INSTALL_DIR", "uv-python"}},
	"bunx": {{"BUN_INSTALL", "bun"}},
	"bun":  {{"BUN_INSTALL", "bun"}},
}

// A cacheDir is a variable that moves a cache, and the folder of the
// server's own it is pointed at.
type cacheDir struct{ env, folder string }

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
// It is worked out from the settings file as written: a path an entry
// names is never taken through a symlink that a server could have left,
// and working it out changes nothing on disk (make does, once the view
// passes its checks).
type view struct {
	ro, rw []string // host paths, absolute and clean, seen where they are
	// cwd is the server's working folder; ownCwd says the entry chose it,
	// and it is then one of rw. Otherwise it is the settings file's
	// folder, which the server sees only as far as rw and ro show it.
	cwd    string
	ownCwd bool
	home   string
	// hidden are the bot's paths, present or future, that no server may
	// see (its settings, secrets and data); masks the system's secrets,
	// which lie in folders no server may write and are covered where
	// shown.
	hidden, masks []string
	network       bool
	// mkdirs are the folders the server gets that are not there yet, and
	// touch the files shown alone that are not: make creates them, the
	// server's own.
	mkdirs, touch []string
	// cacheEnv points the package launcher's caches at the server's own.
	cacheEnv map[string]string
	// from says which field of the entry named each of rw ("env
	// MEMORY_DB_PATH", "cwd"), for a refusal to point at; field is the
	// one being read.
	from  map[string]string
	field string
	// named are the paths the entry's arguments and env name, which the
	// server must reach.
	named []string
}

// A viewPlan is what the view of a server is worked out from, beside its
// entry.
type viewPlan struct {
	// command is the program found for the entry's command.
	command string
	env     map[string]string
	// hidden are the bot's paths no server may see or write beside.
	hidden []string
	// writable are the folders any server of the settings file may write:
	// a symlink below one may have been left there by a server, and is
	// never followed.
	writable []string
	// cache is the server's own folder for package caches.
	cache string
}

// errView starts the message of a server whose view the hub refuses.
var errView = errors.New("not started")

// newView works out the view of server cfg as p says, or says why the
// server may not have one.
func newView(cfg config, p viewPlan) (view, error) {
	v := view{network: !cfg.sandbox.noNetwork, home: p.env["HOME"], hidden: p.hidden, cacheEnv: map[string]string{}, from: map[string]string{}}
	v.cwd, v.ownCwd = cfg.workDir(), cfg.cwd != ""
	n := namer{v: &v, writable: p.writable}
	switch {
	case v.ownCwd:
		v.field = `"cwd"`
		n.folder(v.cwd)
	case v.cwd == "":
		v.cwd, _ = os.Getwd() // no settings file's folder: the bot's
	}
	for _, dir := range filepath.SplitList(p.env["PATH"]) {
		// Not / or the home folder, which would show it all, nor a folder
		// that holds anything of the bot's (the checkout mcpgram was
		// built in).
		if dir = filepath.Clean(dir); filepath.IsAbs(dir) && dir != "/" && dir != v.home && !v.holdsHidden(installPrefix(dir)) {
			v.addRO(installPrefix(dir))
		}
	}
	n.name(p.command, true)
	if real := resolved(p.command); real != p.command && n.err == nil {
		// A link to the program elsewhere, as npx is to npm's script.
		n.name(real, true)
	}
	shell := slices.Contains(shells, filepath.Base(p.command))
	for i, a := range cfg.args {
		v.field = fmt.Sprintf("argument %q", a)
		if shell && i > 0 && cfg.args[i-1] == "-c" {
			n.script(a)
			continue
		}
		if q, ok := v.pathIn(a); ok {
			n.name(q, false)
			v.named = append(v.named, q)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.env)) {
		v.field = fmt.Sprintf("env %s (%q)", k, cfg.env[k])
		if q, ok := v.pathIn(cfg.env[k]); ok {
			n.name(q, false)
			v.named = append(v.named, q)
		}
	}
	v.field = "package cache"
	for _, c := range packageCaches[filepath.Base(cfg.command)] {
		if _, own := cfg.env[c.env]; own || p.cache == "" {
			continue
		}
		dir := filepath.Join(p.cache, c.folder)
		v.cacheEnv[c.env] = dir
		n.folder(dir)
	}
	for _, q := range cfg.sandbox.paths {
		v.field = fmt.Sprintf(`"sandbox" "paths" %q`, q)
		n.folder(q)
	}
	for _, q := range cfg.sandbox.readOnly {
		n.readOnly(q)
	}
	for _, pattern := range hiddenSystemFiles {
		matches, _ := filepath.Glob(pattern)
		v.masks = append(v.masks, matches...)
	}
	if n.err != nil {
		return v, n.err
	}
	return v, v.check()
}

// holdsHidden reports whether folder dir holds one of the bot's paths.
func (v *view) holdsHidden(dir string) bool {
	return slices.ContainsFunc(v.hidden, func(h string) bool { return within(h, dir) || within(resolved(h), resolved(dir)) })
}

// check refuses a view that would let the server write in a folder that
// holds one of the bot's paths, present or future: a file there may be
// planted before the bot creates it (a database's journal), or replaced
// while the server runs, and no sandbox can keep either out of a folder it
// lets the server write. The refusal names the field of the entry that
// asked for the folder, and what to write there instead.
func (v view) check() error {
	for _, dir := range v.rw {
		for _, p := range v.hidden {
			if within(p, dir) || within(resolved(p), resolved(dir)) {
				field := v.from[dir]
				if field == "" {
					field = "entry"
				}
				return fmt.Errorf("%w: its %s would let it write in %s, which holds %s, of the bot's own: %s", errView, field, dir, p, ownFolderFix(field, dir))
			}
		}
	}
	return nil
}

// ownFolderFix says how to give a server a folder of its own in place of
// dir, which field of its entry named.
func ownFolderFix(field, dir string) string {
	own := filepath.Join(dir, "<server>")
	switch {
	case field == `"cwd"`:
		return fmt.Sprintf(`give it a "cwd" of its own, such as %s`, own)
	case strings.HasPrefix(field, `"sandbox"`):
		return fmt.Sprintf(`name a folder of its own in "sandbox" "paths", such as %s`, own)
	}
	return fmt.Sprintf("point it at a folder of its own, such as %s", own)
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
	if p = filepath.Clean(p); p != "" && !slices.Contains(v.ro, p) {
		v.ro = append(v.ro, p)
	}
}

func (v *view) addRW(p string) {
	if p = filepath.Clean(p); p != "" && !slices.Contains(v.rw, p) {
		v.rw = append(v.rw, p)
		if v.from != nil && v.field != "" {
			v.from[p] = v.field
		}
	}
}

// make creates what v shows that is not there yet, as the server's own
// (u's, where not the bot's), once v has passed its checks.
func (v view) make(u user) error {
	for _, dir := range v.mkdirs {
		if err := mkdirOwned(dir, u); err != nil {
			return err
		}
	}
	for _, p := range v.touch {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		f.Close()
		if u.uid != 0 {
			if err := os.Lchown(p, u.uid, u.gid); err != nil {
				return fmt.Errorf("give %s to the server: %w", p, err)
			}
		}
	}
	return nil
}

// mkdirOwned makes folder dir and the missing folders above it, the last
// one (dir) given to u where that is not the bot's user.
func mkdirOwned(dir string, u user) error {
	// The folders on the way are only a way there: any user may pass.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o750); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if u.uid != 0 {
		if err := os.Lchown(dir, u.uid, u.gid); err != nil {
			return fmt.Errorf("give %s to the server: %w", dir, err)
		}
		if err := os.Chmod(dir, 0o770); err != nil {
			return fmt.Errorf("give %s to the server: %w", dir, err)
		}
	}
	return nil
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

// mayWrite guesses, from cfg as written, what its server may be shown
// read-write whatever its paths turn out to be: its own working folder,
// its sandbox paths and cache, and each path it names with, unless that is
// a folder (not a link to one), the folder it is in (never / or home).
// Paths into node_modules and scripts, which are shown read-only, are not
// among them.
func mayWrite(cfg config, home, cache string) []string {
	v := view{home: home, cwd: cfg.workDir()}
	var out []string
	add := func(p string) {
		if p = filepath.Clean(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	named := func(s string) {
		p, ok := v.pathIn(s)
		if !ok || strings.Contains(p, "/node_modules/") {
			return
		}
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode().IsRegular() && slices.Contains(scriptExts, filepath.Ext(p)) {
			return
		}
		add(p)
		if err == nil && fi.IsDir() {
			return
		}
		if d := filepath.Dir(p); d != "/" && d != home {
			add(d)
		}
	}
	if cfg.cwd != "" {
		add(cfg.cwd)
	}
	for _, a := range cfg.args {
		named(a)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.env)) {
		named(cfg.env[k])
	}
	for _, p := range cfg.sandbox.paths {
		add(p)
	}
	if cache != "" {
		add(cache)
	}
	return out
}

// viewPlan is what the view of server name, whose command was found at
// command and whose environment is env, is worked out from: the bot's
// paths, and the folders any server of the settings file may write.
func (h *Hub) viewPlan(name string, cfg config, command string, env map[string]string) viewPlan {
	h.mu.Lock()
	servers := slices.Collect(maps.Values(h.servers))
	h.mu.Unlock()
	cfgs := []config{cfg}
	for _, s := range servers {
		s.mu.Lock()
		if s.name != name {
			cfgs = append(cfgs, s.cfg)
		}
		s.mu.Unlock()
	}
	var writable []string
	hidden := append([]string{h.path}, h.opts.Protected...)
	for _, c := range cfgs {
		if c.typ == TypeStdio && c.err == nil {
			writable = append(writable, mayWrite(c, env["HOME"], h.cacheFolder(c.name))...)
		}
		// The key and ID token files of remote entries are the bot's.
		hidden = append(hidden, c.secretFiles...)
	}
	return viewPlan{
		command:  command,
		env:      env,
		hidden:   hidden,
		writable: writable,
		cache:    h.cacheFolder(name),
	}
}
