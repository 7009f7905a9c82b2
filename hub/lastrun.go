package hub

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// A lastRun is how a server's last process ran and how it ended: what
// its status quotes, and what the hints about its sandbox rest on. It
// outlives the process, so that a failed server still says why.
type lastRun struct {
	// writable, sandboxed and uid are how the process ran: the paths it
	// may write, in a sandbox or not, as which user.
	writable  []string
	sandboxed bool
	uid       int
	// refusal is the last write the sandbox refused it, and how to allow
	// it.
	refusal    string
	exitCode   int
	lastStderr string
	stderr     *tail
}

// hint says how to allow the process of r to write path, which its
// sandbox or user refused it; "" where r's settings do not explain it.
func (r *lastRun) hint(path string) string {
	return sandboxHint(path, r.writable, r.sandboxed, r.uid)
}

// ended records how the process of c ended, having failed with err, and
// returns msg, what the status says of it, told better: its exit code
// or the bound it broke, its last line of stderr, and the write its
// sandbox refused it, if any.
func (r *lastRun) ended(c *conn, err error, b mcpgram.Bounds, msg string) string {
	if st := c.cmd.ProcessState; st != nil {
		r.exitCode = st.ExitCode()
		if errors.Is(err, errExited) {
			msg = st.String()
			if st.ExitCode() >= 0 {
				msg = "exited with code " + strconv.Itoa(st.ExitCode())
			}
			if be := endedByBound(b, st.String(), st.ExitCode(), c.outOfMemory.Load()); be != nil {
				msg = be.Error() + " (" + msg + ")"
			}
		}
	}
	r.lastStderr = c.stderr.lastLine()
	if r.lastStderr != "" && !strings.Contains(msg, r.lastStderr) {
		msg += ": " + r.lastStderr
	}
	if hint := r.hint(refusedWrite(c.stderr.String())); hint != "" {
		msg += " (" + hint + ")"
		r.refusal = hint
	}
	return msg
}
