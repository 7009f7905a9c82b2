package limits

import "time"

// SweepFloor is sweepFloor, for the tests.
const SweepFloor = sweepFloor

// SetClock makes u read the time from now.
func (u *Users) SetClock(now func() time.Time) { u.now = now }

// Counted is how many users u counts in memory.
func (u *Users) Counted() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.local)
}

// SetClock makes r read the time from now.
func (r *Refusals) SetClock(now func() time.Time) { r.now = now }

// Remembered is how many strangers r remembers telling.
func (r *Refusals) Remembered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.told)
}
