package hub

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock rights. A rule on a file may hold only llFile of them.
const (
	llRead    = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llRunRead = llRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	llDevice  = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llFile    = llDevice | unix.LANDLOCK_ACCESS_FS_EXECUTE
	llAll     = ^uint64(0)
)

// devices are the device files every program may use.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// handledFS is every filesystem right the kernel's Landlock ABI knows:
// those it does not handle it cannot deny.
func handledFS(abi int) uint64 {
	h := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: execute to make_sym
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// A ruleset is a Landlock ruleset being filled.
type ruleset struct {
	fd      int
	handled uint64
}

// newRuleset creates the ruleset of view v: filesystem rights as ABI abi
// knows them, TCP cut where v has no network (ABI 4), and, from ABI 6,
// no signals to processes outside the sandbox (the bot among them) and,
// without network, no abstract Unix sockets either.
func newRuleset(v view, abi int) (*ruleset, error) {
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handledFS(abi)}
	size := unsafe.Sizeof(attr.Handled_access_fs)
	if abi >= 4 {
		size += unsafe.Sizeof(attr.Handled_access_net)
		if !v.network {
			attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size += unsafe.Sizeof(attr.Scoped)
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		if !v.network {
			attr.Scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return nil, fmt.Errorf("create Landlock ruleset: %w", errno)
	}
	return &ruleset{fd: int(fd), handled: attr.Handled_access_fs}, nil
}

// allow grants rights beneath path (or on it, for a file). A path that
// does not exist is no error: there is nothing to grant.
func (r *ruleset) allow(path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFile
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights & r.handled, Parent_fd: int32(fd)}
	if attr.Allowed_access == 0 {
		return nil
	}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock %s: %w", path, errno)
	}
	return nil
}

// allowExcept grants rights beneath dir but for the hidden paths under it:
// Landlock only grants, so the folders on the way to a hidden path are
// granted entry by entry, and only their listing as a whole.
func (r *ruleset) allowExcept(dir string, hidden []string, rights uint64) error {
	dir = resolved(dir)
	var inside []string
	for _, h := range hidden {
		if h := resolved(h); within(h, dir) {
			inside = append(inside, h)
		}
	}
	switch {
	case len(inside) == 0:
		return r.allow(dir, rights)
	case slices.Contains(inside, dir):
		return nil
	}
	if err := r.allow(dir, unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable: nothing to grant beneath it
	}
	for _, e := range entries {
		if err := r.allowExcept(filepath.Join(dir, e.Name()), inside, rights); err != nil {
			return err
		}
	}
	return nil
}

// fill grants view v: the system's parts to read and run, /proc to read
// (what of another process is private, Landlock keeps from a sandboxed
// one), the common devices, v's read-only paths but for the bot's, and its
// read-write ones (which hold none of the bot's: see check).
func (r *ruleset) fill(v view) error {
	grants := []struct {
		paths  []string
		rights uint64
	}{
		{systemDirs, llRunRead}, {etcLinksOut(), llRead}, {[]string{"/proc"}, llRead}, {devices, llDevice}, {v.ro, llRunRead},
	}
	for _, g := range grants {
		for _, p := range g.paths {
			if err := r.allowExcept(p, slices.Concat(v.hidden, v.masks), g.rights); err != nil {
				return err
			}
		}
	}
	for _, p := range v.rw {
		if err := r.allow(p, llAll); err != nil {
			return err
		}
	}
	return nil
}

// startLandlocked starts cmd confined by Landlock to view v.
func startLandlocked(cmd *exec.Cmd, v view, abi int) error {
	r, err := newRuleset(v, abi)
	if err != nil {
		return err
	}
	defer unix.Close(r.fd)
	if err := r.fill(v); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go restrictAndStart(r.fd, cmd, errc)
	return <-errc
}

// restrictAndStart restricts the thread it runs on and starts cmd from it,
// so that the child inherits the restriction and the bot's other threads
// never had it. The thread stays locked and so ends with the goroutine.
// Never the main thread: /proc shows the process by it, and a sandboxed
// process may look into one that shares its restriction.
func restrictAndStart(ruleset int, cmd *exec.Cmd, errc chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// Hold the main thread, so that the retry runs on another, then
		// give it back as it was.
		done := make(chan struct{})
		go func() {
			restrictAndStart(ruleset, cmd, errc)
			close(done)
		}()
		<-done
		runtime.UnlockOSThread()
		return
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		errc <- fmt.Errorf("no_new_privs: %w", err)
		return
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		errc <- fmt.Errorf("landlock_restrict_self: %w", errno)
		return
	}
	errc <- cmd.Start()
}
