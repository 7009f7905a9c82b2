// Package keylock holds a lock per key (a chat, a user) that costs nothing
// once nobody holds or waits for it: a key's lock is made at its first
// Lock and dropped at the last holder's unlock, so that keys come and go
// without a trace however many are ever seen.
package keylock

import (
	"context"
	"sync"
)

// Locks are locks by key. The zero value is ready to use; a Locks must
// not be copied after first use.
type Locks struct {
	mu sync.Mutex
	m  map[string]*lock
}

// A lock is one key's: a slot for its holder, and the count of its holder
// and waiters, under Locks.mu.
type lock struct {
	ch   chan struct{}
	refs int
}

// Lock waits for key's lock, or for ctx to end. The returned unlock,
// called once, lets the next waiter in. Waiters are not served in order.
func (l *Locks) Lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	k := l.m[key]
	if k == nil {
		if l.m == nil {
			l.m = map[string]*lock{}
		}
		k = &lock{ch: make(chan struct{}, 1)}
		l.m[key] = k
	}
	k.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if k.refs--; k.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case k.ch <- struct{}{}:
		return func() { <-k.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Len is the number of keys whose lock is held or waited for.
func (l *Locks) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
