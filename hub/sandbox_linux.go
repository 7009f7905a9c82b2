package hub

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// probeSandboxes finds out which sandboxes work here.
func probeSandboxes() SandboxSupport {
	var s SandboxSupport
	s.Bubblewrap, s.BubblewrapErr = probeBubblewrap()
	s.LandlockABI, s.LandlockErr = probeLandlock()
	return s
}

// probeBubblewrap runs bwrap once with the namespaces and mounts every
// sandbox uses: whether it may is up to the kernel, its settings and, in
// a container, the container's seccomp and AppArmor profiles, and only
// trying tells.
func probeBubblewrap() (path, why string) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", "bubblewrap is not installed (no bwrap on PATH)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL",
		"--", path, "--version")
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", path + " cannot make a sandbox here: " + msg
	}
	return path, ""
}

// probeLandlock asks the kernel for its Landlock ABI. Version 1 is not
// enough: it forbids moving a file from one folder to another, which
// package managers do all the time.
func probeLandlock() (abi int, why string) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errors.Is(errno, unix.ENOSYS):
		return 0, "this kernel has no Landlock (Linux 5.13 or later has it; a container's seccomp profile may also refuse it)"
	case errors.Is(errno, unix.EOPNOTSUPP):
		return 0, "Landlock is turned off in this kernel (it is on with landlock in the lsm= boot parameter)"
	case errno != 0:
		return 0, "Landlock is refused: " + errno.Error()
	case v < 2:
		return 0, "this kernel's Landlock (ABI " + strconv.Itoa(int(v)) + ") cannot let a program move files between folders, which package managers need (Linux 5.19 or later can)"
	}
	return int(v), ""
}
