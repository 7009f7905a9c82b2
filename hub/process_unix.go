//go:build unix

package hub

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup makes the child the leader of a new session, and so of
// a new process group, so that stopping the server reaches every process
// it started. A session of its own also leaves it without the bot's
// terminal, into which it could otherwise type (TIOCSTI) when the bot
// runs in one.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// signalGroup sends sig to every process of the group led by pid.
func signalGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// groupAlive reports whether a live process of the group led by pid is left.
// The group's signals reach zombies too, and an exited orphan stays one
// where nothing reaps it (a container whose init reaps nothing): those
// count as gone.
func groupAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(-pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombiesOnly(pid)
}

// endGroup stops whatever is left of the group led by pid once its leader is
// gone: processes the server spawned would otherwise live on as orphans. It
// reports whether some ignored SIGTERM and had to be killed.
func endGroup(pid int, grace time.Duration) (killed bool) {
	if !groupAlive(pid) {
		return false
	}
	signalGroup(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if !groupAlive(pid) {
			return false
		}
	}
	signalGroup(pid, syscall.SIGKILL)
	// SIGKILL is delivered, not done: wait (briefly) until the kernel has
	// ended them, so that nothing outlives the stop that reports them.
	deadline = time.Now().Add(killWait)
	for groupAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return true
}

// killWait bounds the wait for killed processes to end.
const killWait = 2 * time.Second

// terminate asks every process of the server to stop. In a bubblewrap
// sandbox the group's leader is bwrap, which passes no signal on and
// would die at once, taking the sandbox and the server with it before the
// server could end cleanly: every process but bwrap gets the signal, and
// bwrap ends when the server does.
func terminate(cmd *exec.Cmd, sandboxed bool) {
	pid := cmd.Process.Pid
	if !sandboxed {
		signalGroup(pid, syscall.SIGTERM)
		return
	}
	for _, p := range groupMembers(pid) {
		if p != pid {
			_ = syscall.Kill(p, syscall.SIGTERM)
		}
	}
}

// kill stops every process of the server at once.
func kill(cmd *exec.Cmd) { signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
