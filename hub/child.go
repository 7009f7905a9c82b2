package hub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
)

// A child is what the hub holds of the process of a stdio server's
// connection: the command, our ends of its pipes, its sandbox's traces.
// A remote connection has none (cmd nil).
type child struct {
	cmd    *exec.Cmd // nil for a remote server
	stderr *tail
	// exited is closed once the process has exited (and been reaped).
	exited chan struct{}
	stdout *os.File       // our end of a child's stdout
	lines  *io.PipeWriter // what the stdout guard hands mcp-go
	// sandboxed says the child is bubblewrap, which leads the process
	// group; tmp is a Landlock sandbox's private temporary folder.
	sandboxed bool
	// outOfMemory: its stderr said it ran out of memory.
	outOfMemory atomic.Bool
	// depth is how many generations below the process the hub started
	// the server's own processes begin (bubblewrap's two come first).
	depth int
	tmp   string
}

// newChild is the child of a connection not started yet.
func newChild() child {
	return child{exited: make(chan struct{}), stderr: newTail()}
}

// removeTmp removes the private temporary folder of a Landlock sandbox.
func (ch *child) removeTmp() {
	if ch.tmp != "" {
		_ = os.RemoveAll(ch.tmp)
	}
}

// stop ends the process, whose stdin is closed: it gives it stopGrace to
// exit, then SIGTERMs its whole process group, and after killGrace more
// SIGKILLs it. It returns an error if the process, or one it left
// behind, had to be killed.
func (ch *child) stop(stopGrace, killGrace time.Duration) error {
	var err error
	select {
	case <-ch.exited:
	case <-time.After(stopGrace):
		terminate(ch.cmd, ch.sandboxed)
		select {
		case <-ch.exited:
		case <-time.After(killGrace):
			kill(ch.cmd)
			// Reaped once dead, so that how it ended can be read.
			<-ch.exited
			err = fmt.Errorf("killed: it ignored its closed stdin for %s and SIGTERM for %s", seconds(stopGrace), seconds(killGrace))
		}
	}
	if endGroup(ch.cmd.Process.Pid, killGrace) {
		err = errors.Join(err, fmt.Errorf("killed processes it left behind, which ignored SIGTERM for %s", seconds(killGrace)))
	}
	// Our end of its stdout stays open until it has exited: a server may
	// still write as it winds up (a modern one answers its open
	// subscriptions/listen request), and a write to a pipe nobody reads
	// would kill it with SIGPIPE before its clean-up. Then the guard's
	// reads and writes end, and mcp-go reads the end of its input.
	ch.stdout.Close()
	ch.lines.Close()
	ch.removeTmp()
	return err
}
