package web

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A Probe follows the outcome of something the process does again and
// again (a long poll, a model call) for a readiness check.
type Probe struct {
	what   string
	window time.Duration
	// recent requires a success within window: for what must keep
	// happening (polling). Without it, a Probe is ready until a failure
	// and stays so while a success is within window (the model, which may
	// be idle for hours).
	recent bool

	mu       sync.Mutex
	lastOK   time.Time
	failedAt time.Time // the last failure, when no success came after it
	now      func() time.Time
}

// NewRecentProbe returns a Probe that is ready only while the last success
// is at most window old.
func NewRecentProbe(what string, window time.Duration) *Probe {
	return &Probe{what: what, window: window, recent: true, now: time.Now}
}

// NewFailureProbe returns a Probe that is ready unless its last attempt
// failed and no success came within window.
func NewFailureProbe(what string, window time.Duration) *Probe {
	return &Probe{what: what, window: window, now: time.Now}
}

// OK records a success. A nil Probe ignores it.
func (p *Probe) OK() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.lastOK, p.failedAt = p.now(), time.Time{}
	p.mu.Unlock()
}

// Fail records a failure. A nil Probe ignores it. What failed is for the
// log: a readiness answer is public to whoever reaches the port, so it
// says only since when.
func (p *Probe) Fail() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.failedAt.IsZero() {
		p.failedAt = p.now()
	}
	p.mu.Unlock()
}

// Check is the Probe's readiness, for a Check.
func (p *Probe) Check(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := !p.lastOK.IsZero() && p.now().Sub(p.lastOK) <= p.window
	switch {
	case fresh:
		return nil
	case p.recent && p.lastOK.IsZero():
		return fmt.Errorf("%s: no success yet", p.what)
	case p.recent:
		return fmt.Errorf("%s: no success for %s", p.what, p.now().Sub(p.lastOK).Round(time.Second))
	case !p.failedAt.IsZero():
		return fmt.Errorf("%s: failing for %s", p.what, p.now().Sub(p.failedAt).Round(time.Second))
	}
	return nil
}
