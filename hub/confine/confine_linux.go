package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// become takes on spec and runs command as argv. The bounding set of
// capabilities belongs to a thread, and exec carries over the calling
// thread's: all of it happens on one locked thread.
func become(spec Spec, command string, argv []string) error {
	runtime.LockOSThread()
	if err := setLimits(spec.Limits); err != nil {
		return err
	}
	if spec.UID != 0 {
		if err := drop(spec); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	path := command
	if !strings.ContainsRune(path, '/') {
		found, err := exec.LookPath(path)
		if err != nil {
			return err
		}
		path = found
	}
	return unix.Exec(path, argv, os.Environ())
}

// setLimits takes on l, soft and hard alike: the server may not raise them.
func setLimits(l Limits) error {
	for _, lim := range []struct {
		name     string
		resource int
		value    int64
	}{
		{"memory", unix.RLIMIT_DATA, l.Memory},
		{"processes", unix.RLIMIT_NPROC, l.Processes},
		{"file size", unix.RLIMIT_FSIZE, l.FileSize},
	} {
		if lim.value <= 0 {
			continue
		}
		r := unix.Rlimit{Cur: uint64(lim.value), Max: uint64(lim.value)}
		if err := unix.Setrlimit(lim.resource, &r); err != nil {
			return fmt.Errorf("bound %s: %w", lim.name, err)
		}
	}
	return nil
}

// drop gives spec.Own to the server's user and becomes that user, with
// no supplementary group and no capability: none kept, none that an exec
// could grant (the bounding set is emptied, and no_new_privs follows).
func drop(spec Spec) error {
	for _, p := range spec.Own {
		if err := os.Lchown(p, spec.UID, spec.GID); err != nil {
			return fmt.Errorf("give %s to user %d: %w", p, spec.UID, err)
		}
	}
	for c := 0; c <= 63; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(spec.GID, spec.GID, spec.GID); err != nil {
		return fmt.Errorf("setresgid %d: %w", spec.GID, err)
	}
	if err := syscall.Setresuid(spec.UID, spec.UID, spec.UID); err != nil {
		return fmt.Errorf("setresuid %d: %w", spec.UID, err)
	}
	// What it makes, the servers' group may use too: a folder two servers
	// are given serves both.
	syscall.Umask(0o002)
	// The switch cleared the permitted and effective sets; the
	// inheritable and ambient ones go too.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	if os.Getuid() != spec.UID || os.Geteuid() != spec.UID || os.Getgid() != spec.GID {
		return fmt.Errorf("still uid %d, want %d", os.Geteuid(), spec.UID)
	}
	return nil
}
