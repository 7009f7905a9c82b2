// Package pace hands on what arrives faster than it can be shown: a Loop
// runs its flush at once when woken, then at most once an interval
// however often it is woken, until it is closed. What to hand on is the
// flush's business (typically the latest report, kept under the caller's
// lock), so a flood costs neither work downstream nor memory.
package pace

import "time"

// A Loop runs flush on a goroutine of its own: when woken, and then not
// again before interval has passed. Its owner calls Close.
type Loop struct {
	interval time.Duration
	flush    func()
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

// Start starts a Loop that runs flush.
func Start(interval time.Duration, flush func()) *Loop {
	l := &Loop{interval: interval, flush: flush,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// Wake asks for a flush: at once, or when the interval since the last one
// has passed. It never blocks, so a server connection's read loop may
// call it.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops the loop and waits for it; a flush asked for and not yet
// run is not run.
func (l *Loop) Close() {
	close(l.stop)
	<-l.done
}

func (l *Loop) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			return
		}
		l.flush()
		t := time.NewTimer(l.interval)
		select {
		case <-t.C:
		case <-l.stop:
			t.Stop()
			return
		}
	}
}
