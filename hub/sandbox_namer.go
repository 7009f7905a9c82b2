package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

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
