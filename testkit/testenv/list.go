package testenv

import (
	"slices"
	"sync"
)

// A List is what the code under test appends to, from any goroutine,
// while the test reads it: the jobs in the order they ran, a store's
// writes, a turn's events. The zero List is empty and ready.
type List[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add appends v.
func (l *List[T]) Add(v T) {
	l.mu.Lock()
	l.items = append(l.items, v)
	l.mu.Unlock()
}

// All returns a copy of what was added so far, in order.
func (l *List[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}
