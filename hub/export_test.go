package hub

import "testing"

// FakeSandboxes makes the hub believe this machine offers s, until the
// test ends. The answer is the process's: a test that calls it must not
// run in parallel.
func FakeSandboxes(t testing.TB, s SandboxSupport) {
	old := machine
	machine = func() SandboxSupport { return s }
	t.Cleanup(func() { machine = old })
}

// Usage is what the processes of server name take now: processes and
// threads, and resident memory in bytes.
func (h *Hub) Usage(name string) (tasks, rss int64) {
	s, err := h.server(name)
	if err != nil {
		return 0, 0
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil || c.cmd == nil {
		return 0, 0
	}
	u := treeUsage(c.cmd.Process.Pid, c.depth)
	return u.tasks, u.rss
}

// RefusedWrite is refusedWrite, for its table test.
var RefusedWrite = refusedWrite

// UserLocks counts the users of server, a per-user server, holding or
// waiting for their turn to open a session.
func (h *Hub) UserLocks(server string) int {
	if u := h.accountsOf(server); u != nil {
		return u.lockCount()
	}
	return 0
}

// ToolApp is toolApp, for its fuzz test.
var ToolApp = toolApp

// AppPage is appPage, for the fuzz test of what a page declares.
var AppPage = appPage

// DecodeTask is how the hub reads a task a server sent: from a
// CreateTaskResult if created, else from tasks/get's answer.
var DecodeTask = decodeTask
