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
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
