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
