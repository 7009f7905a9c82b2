package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing the test once d has passed
// without it. It waits for something to happen; it can never show that
// something does not: for that, wait for a later event that follows it.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	Waiter{}.Eventually(t, d, what, cond)
}

// A Waiter is Eventually for a fake that says when it changed: cond is
// checked again at once on each change, and between them every poll
// interval; a failure tells what the fake holds.
type Waiter struct {
	// Changed returns a channel closed at the fake's next change; nil:
	// cond is only polled.
	Changed func() <-chan struct{}
	// Explain, when set, adds what the fake holds to a failure.
	Explain func() string
}

// pollEvery is how often Eventually checks cond, changes or not.
const pollEvery = 10 * time.Millisecond

// Eventually polls cond as the package's Eventually does.
func (w Waiter) Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		var changed <-chan struct{}
		if w.Changed != nil {
			changed = w.Changed() // before cond: a change during it wakes the wait
		}
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-time.After(pollEvery):
		case <-deadline.C:
			if w.Explain != nil {
				t.Fatalf("gave up after %s waiting for %s\n%s", d, what, w.Explain())
			}
			t.Fatalf("gave up after %s waiting for %s", d, what)
		}
	}
}
