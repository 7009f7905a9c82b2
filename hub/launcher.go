package hub

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
)

// A launcher starts processes from one OS thread that lives as long as the
// hub. bubblewrap ties its sandbox's life to the bot's (--die-with-parent)
// with PR_SET_PDEATHSIG, which fires when the thread that started it ends,
// not the process; and Go ends a thread whenever a goroutine locked to it
// returns (as the Landlock start does on purpose). A thread locked to the
// launcher's goroutine runs nothing else, so it never ends under a server.
type launcher struct {
	mu      sync.Mutex
	started bool
	closed  bool
	reqs    chan launch
	done    chan struct{}
}

type launch struct {
	cmd *exec.Cmd
	err chan error
}

var errLauncherClosed = errors.New("the hub is closed")

// start starts cmd from the launcher's thread.
func (l *launcher) start(cmd *exec.Cmd) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errLauncherClosed
	}
	if !l.started {
		l.started = true
		l.reqs, l.done = make(chan launch), make(chan struct{})
		go l.run()
	}
	req := launch{cmd: cmd, err: make(chan error, 1)}
	// Sent under the lock, so that close never closes reqs under a send.
	l.reqs <- req
	l.mu.Unlock()
	return <-req.err
}

func (l *launcher) run() {
	defer close(l.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for req := range l.reqs {
		req.err <- req.cmd.Start()
	}
}

// close ends the launcher once every server is stopped: the thread goes
// back to Go, unlocked, and lives on.
func (l *launcher) close() {
	l.mu.Lock()
	l.closed = true
	started := l.started
	if started {
		close(l.reqs)
	}
	l.mu.Unlock()
	if started {
		<-l.done
	}
}
