package hub

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A mountOp is one bubblewrap option that shapes the sandbox's filesystem,
// at the path it acts on.
type mountOp struct {
	path string
	args []string
}

// bwrapArgs returns the options that run command with args in a bubblewrap
// sandbox showing view v. The server gets its own process, IPC and host
// name namespaces and no capabilities (bubblewrap run by root would keep
// them, and with them the power to undo its mounts), and it dies with the
// bot. Its filesystem is v: a read-only folder that holds a protected file
// is shown entry by entry without it, and the files v covers (the bot's
// data, the system's secrets) are covered by /dev/null wherever shown.
func bwrapArgs(v view, command string, args []string) []string {
	a := []string{"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"}
	if !v.network {
		a = append(a, "--unshare-net")
	}
	var shown []bindPath // what the sandbox shows of the host, for masks
	var ops []mountOp
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				ops = append(ops, mountOp{d, []string{"--symlink", target, d}})
				shown = append(shown, bindPath{path: d})
			}
		case fi.IsDir():
			ops = append(ops, roExcept(d, d, v.protected)...)
			shown = append(shown, bindPath{path: d})
		}
	}
	ops = append(ops, mountOp{"/proc", []string{"--proc", "/proc"}}, mountOp{"/dev", []string{"--dev", "/dev"}}, mountOp{"/tmp", []string{"--tmpfs", "/tmp"}})
	for _, t := range etcLinksOut() {
		if !coveredBy(t, false, shown) {
			ops = append(ops, mountOp{t, []string{"--ro-bind", t, t}})
			shown = append(shown, bindPath{path: t})
		}
	}
	for _, b := range v.binds() {
		if _, err := os.Stat(b.path); err != nil || coveredBy(b.path, b.rw, shown) {
			continue
		}
		if b.rw {
			ops = append(ops, mountOp{b.path, []string{"--bind", b.path, b.path}})
		} else {
			ops = append(ops, roExcept(b.path, b.path, v.protected)...)
		}
		shown = append(shown, b)
	}
	for _, d := range []string{v.home, v.cwd} {
		if d != "" && d != "/" && !coveredBy(d, false, shown) {
			// An empty folder, so that the server can go there.
			ops = append(ops, mountOp{d, []string{"--dir", d}})
		}
	}
	slices.SortStableFunc(ops, func(x, y mountOp) int { return depth(x.path) - depth(y.path) })
	for _, op := range ops {
		a = append(a, op.args...)
	}
	a = append(a, v.masks(shown)...)
	a = append(a, "--chdir", v.cwd, "--", command)
	return append(a, args...)
}

// A bindPath is a host path the sandbox shows where it is.
type bindPath struct {
	path string
	rw   bool
}

// binds are v's folders and files, read-write ones last so that a
// read-write one beneath a read-only one is not hidden by it.
func (v view) binds() []bindPath {
	var out []bindPath
	for _, p := range v.ro {
		if !slices.Contains(v.rw, p) {
			out = append(out, bindPath{path: p})
		}
	}
	for _, p := range v.rw {
		out = append(out, bindPath{path: p, rw: true})
	}
	return out
}

// coveredBy reports whether p already shows through one of shown, with
// write access where rw asks for it.
func coveredBy(p string, rw bool, shown []bindPath) bool {
	for _, s := range shown {
		if within(p, s.path) && (s.rw || !rw) {
			return true
		}
	}
	return false
}

// roExcept shows the host folder src at dest read-only, but for the hidden
// paths beneath it: where one lies beneath, dest becomes an empty folder
// in which each entry is shown on its own. A mount that covered the hidden
// file would fall away if the file were replaced by a rename while the
// server runs; a file never shown cannot reappear.
func roExcept(src, dest string, hidden []string) []mountOp {
	src = resolved(src)
	var inside []string
	for _, h := range hidden {
		if h := resolved(h); within(h, src) {
			inside = append(inside, h)
		}
	}
	switch {
	case len(inside) == 0:
		return []mountOp{{dest, []string{"--ro-bind", src, dest}}}
	case slices.Contains(inside, src):
		return nil
	}
	ops := []mountOp{{dest, []string{"--tmpfs", dest}}}
	entries, err := os.ReadDir(src)
	if err != nil {
		return ops
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dest, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(from); err == nil {
				ops = append(ops, mountOp{to, []string{"--symlink", target, to}})
			}
			continue
		}
		ops = append(ops, roExcept(from, to, inside)...)
	}
	return ops
}

// masks covers the files of v.data that the shown folders show: a file
// with /dev/null, which reads as empty, a folder with an empty one. They
// are changed in place, so the cover holds: a replaced file would show
// again, which is why protected files are never shown at all instead.
// (Showing /etc entry by entry, as for those, would cost half a second.)
func (v view) masks(shown []bindPath) []string {
	var dests []string
	kind := map[string]bool{} // dest: is a folder
	for _, s := range shown {
		for _, p := range v.data {
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			for _, d := range exposures(s.path, []string{p}) {
				if !slices.Contains(dests, d) {
					dests = append(dests, d)
					kind[d] = fi.IsDir()
				}
			}
		}
	}
	slices.SortFunc(dests, func(x, y string) int { return depth(x) - depth(y) })
	var a []string
	for _, d := range dests {
		if kind[d] {
			a = append(a, "--tmpfs", d)
		} else {
			a = append(a, "--ro-bind", "/dev/null", d)
		}
	}
	return a
}

// etcLinksOut are the targets of /etc's symlinks that lie outside the
// system's folders: /etc/resolv.conf points into /run under
// systemd-resolved, and without it no name resolves.
func etcLinksOut() []string {
	entries, err := os.ReadDir("/etc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			continue
		}
		t, err := filepath.EvalSymlinks(filepath.Join("/etc", e.Name()))
		if err != nil || within(t, "/proc") || slices.Contains(out, t) {
			continue
		}
		inSystem := false
		for _, d := range systemDirs {
			inSystem = inSystem || within(t, resolved(d))
		}
		if !inSystem {
			out = append(out, t)
		}
	}
	return out
}

func depth(p string) int { return strings.Count(filepath.Clean(p), string(filepath.Separator)) }
