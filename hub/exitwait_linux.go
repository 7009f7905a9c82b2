package hub

import "golang.org/x/sys/unix"

// waitExit blocks until the process pid has exited, without reaping it: the
// mcp-go transport owns the exec.Cmd and reaps it in Close, and it offers no
// other way to learn that the child died while no request is in flight.
func waitExit(pid int, _ <-chan struct{}) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
