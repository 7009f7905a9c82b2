package hub

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram/hub/confine"
)

// A mountOp is one bubblewrap option that shapes the sandbox's filesystem,
// at the path it acts on.
type mountOp struct {
	path string
	args []string
}

// confinePath is where the sandbox shows the program that confines the
// server (see package confine).
const confinePath = "/run/mcpgram/confine"

// A jail is how one server's bubblewrap sandbox runs beside its view.
type jail struct {
	// confine is the host path of the program that confines the server
	// (see package confine) to spec, to run command with args. Where spec
	// has a user of its own, the program keeps the capabilities that
	// switch users until it has, and is given the folders the sandbox
	// makes in memory for the server.
	confine string
	spec    confine.Spec
	command string
	args    []string
	// tmp bounds each folder the sandbox makes for the server in memory:
	// /tmp, /dev/shm, and its home and working folders where no path of
	// the host shows there.
	tmp int64
}

// bwrapArgs returns the options that run the server in a bubblewrap
// sandbox showing view v. The server gets its own process, IPC and host
// name namespaces and no capabilities (bubblewrap run by root would keep
// them, and with them the power to undo its mounts), and it dies with the
// bot. Its filesystem is v: a read-only folder that holds a path of the
// bot's is shown entry by entry without it, the system's secrets are
// covered by /dev/null, and /proc is read-only as a whole, whatever
// bubblewrap's own test of it decides (as root it may leave /proc/sys
// writable). What the sandbox makes in memory is bounded by j.tmp.
func bwrapArgs(v view, j jail) []string {
	a := []string{"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL"}
	if j.spec.UID != 0 {
		a = append(a, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_CHOWN")
	}
	if !v.network {
		a = append(a, "--unshare-net")
	}
	size := func(mode string) []string {
		if j.tmp <= 0 {
			return []string{"--perms", mode}
		}
		return []string{"--perms", mode, "--size", strconv.FormatInt(j.tmp, 10)}
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
			ops = append(ops, roExcept(d, d, v.hidden)...)
			shown = append(shown, bindPath{path: d})
		}
	}
	ops = append(ops,
		mountOp{"/proc", []string{"--proc", "/proc", "--remount-ro", "/proc"}},
		mountOp{"/dev", []string{"--dev", "/dev"}},
		mountOp{"/dev/shm", append(size("1777"), "--tmpfs", "/dev/shm")},
		mountOp{"/tmp", append(size("1777"), "--tmpfs", "/tmp")},
		mountOp{confinePath, []string{"--ro-bind", j.confine, confinePath}})
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
			ops = append(ops, roExcept(b.path, b.path, v.hidden)...)
		}
		shown = append(shown, b)
	}
	for _, d := range []string{v.home, v.cwd} {
		if d != "" && d != "/" && !coveredBy(d, false, shown) && !slices.ContainsFunc(ops, func(op mountOp) bool { return op.path == d }) {
			// A folder in memory, so that the server can go there and
			// write (its home's dotfiles), gone when it stops.
			ops = append(ops, mountOp{d, append(size("0755"), "--tmpfs", d)})
			if j.spec.UID != 0 {
				j.spec.Own = append(j.spec.Own, d)
			}
		}
	}
	ops = append(ops, passages(ops, shown)...)
	slices.SortStableFunc(ops, func(x, y mountOp) int { return depth(x.path) - depth(y.path) })
	for _, op := range ops {
		a = append(a, op.args...)
	}
	a = append(a, maskArgs(v.masks, shown)...)
	args, _ := confine.Command(j.spec, j.command, j.args) // a Spec always encodes
	a = append(a, "--chdir", v.cwd, "--", confinePath)
	return append(a, args...)
}

// passages are the folders on the way to what ops show that neither they
// nor a shown folder of the host make, made open to every user:
// bubblewrap 0.8 makes them closed to all but root, which a server that
// runs as a user of its own could not pass.
func passages(ops []mountOp, shown []bindPath) []mountOp {
	var out []mountOp
	made := func(p string) bool {
		return slices.ContainsFunc(ops, func(op mountOp) bool { return op.path == p }) ||
			slices.ContainsFunc(out, func(op mountOp) bool { return op.path == p })
	}
	for _, op := range ops {
		for d := filepath.Dir(op.path); d != "/" && d != "."; d = filepath.Dir(d) {
			if made(d) || coveredBy(d, false, shown) {
				continue
			}
			out = append(out, mountOp{d, []string{"--perms", "0755", "--dir", d}})
		}
	}
	return out
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

// maskArgs covers the system's secret files that the shown folders show:
// a file with /dev/null, which reads as empty, a folder with an empty one.
// They lie in folders no server may write, so the cover holds.
// (Showing /etc entry by entry, as for the bot's paths, would cost half a
// second.)
func maskArgs(masks []string, shown []bindPath) []string {
	var dests []string
	kind := map[string]bool{} // dest: is a folder
	for _, s := range shown {
		for _, p := range masks {
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
