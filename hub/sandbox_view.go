package hub

import (
	"errors"
	"fmt"
	"io"
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
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.env)) {
		v.field = fmt.Sprintf("env %s (%q)", k, cfg.env[k])
		if q, ok := v.pathIn(cfg.env[k]); ok {
			n.name(q, false)
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

// A namer shows a view the paths an entry names, and notes the first it
// may not show.
type namer struct {
	v        *view
	writable []string
	err      error
}

// below reports whether p lies strictly below a folder a server may write:
// what is there, a server may have put there.
func (n *namer) below(p string) bool {
	return slices.ContainsFunc(n.writable, func(w string) bool { return p != w && within(p, w) })
}

// stat is os.Stat of p, after checking that nothing on the way to p
// below a folder a server may write is a symlink: such a link may have
// been left by a server to widen its view at its next start. Links
// elsewhere (/bin to /usr/bin, a data folder the operator moved) are
// followed.
func (n *namer) stat(p string) (os.FileInfo, error) {
	q := "/"
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		q = filepath.Join(q, part)
		fi, err := os.Lstat(q)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&os.ModeSymlink != 0 && n.below(q) {
			if n.err == nil {
				n.err = fmt.Errorf("%w: %s is a symbolic link where a server may write, and a server could have left it to widen what it sees: name the path it points to in the entry, or remove the link", errView, q)
			}
			return nil, errSymlink
		}
	}
	return os.Stat(p)
}

var errSymlink = errors.New("a symbolic link")

// pathIn reads a path out of an argument or an env value: an absolute
// path, one that starts with ./, ../ or ~/, one with a slash that exists
// relative to the working folder, or any of these after --flag=. It is
// made absolute against the server's working folder, as the server would,
// and clean.
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
		if _, err := os.Lstat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// script shows the server the paths that a shell command line names and
// that exist: a file as a command, to run, a folder to use.
func (n *namer) script(line string) {
	for _, word := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\n;&|<>()'\"`=", r) }) {
		p, ok := n.v.pathIn(word)
		if !ok {
			continue
		}
		if fi, err := os.Stat(p); err == nil {
			n.name(p, !fi.IsDir())
		}
	}
}

// name shows the server a path its settings name. A folder is its to use.
// A file inside node_modules needs its packages, and a script its project,
// to read; the command is only run, so it is shown read-only, with its
// folder unless that holds anything of the bot's. Any other file is shown
// with its folder, where the server may create what goes beside it (a
// database's journal). A path yet to be is a file where its name has an
// extension, whose folder is shown only if it is missing (and then made)
// or holds nothing but that file's own, and else a folder, made. A file
// right in / or the home folder is shown alone.
func (n *namer) name(p string, command bool) {
	p = filepath.Clean(p)
	for _, d := range notNamed {
		if within(p, d) {
			return
		}
	}
	if i := strings.Index(p, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		n.readOnly(p[:i+len("/node_modules")])
		return
	}
	fi, err := n.stat(p)
	switch {
	case errors.Is(err, errSymlink):
	case err == nil && fi.IsDir():
		if command {
			n.readOnly(p)
		} else {
			n.folder(p)
		}
	case err == nil && (command || slices.Contains(scriptExts, filepath.Ext(p))):
		root := projectOf(filepath.Dir(p), n.v.home)
		if root == "/" || root == n.v.home || n.v.holdsHidden(root) {
			root = p // too much to show for one program: only it
		}
		n.readOnly(root)
	case err == nil:
		n.file(p)
	case errors.Is(err, os.ErrNotExist) && !command:
		n.yetToBe(p)
	}
}

// file shows an existing file with its folder, or alone where the folder
// is / or the home folder.
func (n *namer) file(p string) {
	if dir := filepath.Dir(p); dir != "/" && dir != n.v.home {
		n.folder(dir)
		return
	}
	n.v.addRW(p)
}

// yetToBe shows a path that does not exist yet. Where its folder is
// missing too, that folder is made, the server's own, for it to make the
// path what it will. Else, so as not to show a folder that holds more, a
// name without an extension is made a folder of the server's own (a
// cache, a data folder), and a file's folder is shown only where it holds
// nothing but what is named after the file; else the entry is refused.
func (n *namer) yetToBe(p string) {
	dir := filepath.Dir(p)
	if dir == "/" || dir == n.v.home {
		n.v.touch = append(n.v.touch, p)
		n.v.addRW(p)
		return
	}
	_, err := n.stat(dir)
	switch {
	case errors.Is(err, errSymlink):
	case errors.Is(err, os.ErrNotExist):
		n.folder(dir)
	case filepath.Ext(p) == "":
		n.folder(p)
	case err == nil && n.onlyItsOwn(dir, p):
		n.folder(dir)
	case n.v.holdsHidden(dir):
		n.folder(dir) // check says why, naming the bot's file
	case n.err == nil:
		n.err = fmt.Errorf("%w: %s does not exist yet, and its folder %s holds other files, which the server would be given too: give it a folder of its own (such as %s), or create the file first", errView, p, dir, filepath.Join(dir, "<server>", filepath.Base(p)))
	}
}

// onlyItsOwn reports whether folder dir holds nothing but file p's own:
// p and what is named after it (a database's journals).
func (n *namer) onlyItsOwn(dir, p string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(100)
	if err != nil {
		return errors.Is(err, io.EOF)
	}
	base := filepath.Base(p)
	for _, name := range names {
		if !strings.HasPrefix(name, base) {
			return false
		}
	}
	return len(names) < 100
}

// folder shows folder p read-write, made if it is missing.
func (n *namer) folder(p string) {
	p = filepath.Clean(p)
	fi, err := n.stat(p)
	switch {
	case errors.Is(err, errSymlink):
		return
	case errors.Is(err, os.ErrNotExist):
		if !n.v.system(p) {
			n.v.mkdirs = append(n.v.mkdirs, p)
			n.v.addRW(p)
		}
		return
	case err != nil:
		return
	case !fi.IsDir():
		n.v.addRW(p) // a file the sandbox settings name
		return
	}
	n.v.addRW(p)
}

// readOnly shows p read-only where it exists.
func (n *namer) readOnly(p string) {
	if _, err := n.stat(filepath.Clean(p)); err == nil {
		n.v.addRO(p)
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
	for _, c := range cfgs {
		if c.typ == TypeStdio && c.err == nil {
			writable = append(writable, mayWrite(c, env["HOME"], h.cacheFolder(c.name))...)
		}
	}
	return viewPlan{
		command:  command,
		env:      env,
		hidden:   append([]string{h.path}, h.opts.Protected...),
		writable: writable,
		cache:    h.cacheFolder(name),
	}
}
