package hub

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram/internal/keylock"
)

// accounts are the sessions of a per-user server, by user.
type accounts struct {
	idle time.Duration

	mu       sync.Mutex
	closed   bool
	sessions map[string]*session
	locks    keylock.Locks // a user's turn to open a session
	// learned: the catalog holds the server's own tools, read from a
	// session; defs are their definitions, for every session.
	learned bool
	defs    map[string]mcp.Tool
	wg      sync.WaitGroup
}

// A session is one user's connection.
type session struct {
	c    *conn
	busy int       // calls in flight (accounts.mu)
	last time.Time // when the last call ended (accounts.mu)
	stop chan struct{}
}

func newAccounts(idle time.Duration) *accounts {
	return &accounts{idle: idle, sessions: map[string]*session{}}
}

// lock takes user's turn to open a session, so that one user's calls at
// once open one session and ask to connect once.
func (a *accounts) lock(ctx context.Context, user string) (func(), error) {
	return a.locks.Lock(ctx, user)
}

// lockCount is the number of users holding or waiting for their lock.
func (a *accounts) lockCount() int { return a.locks.Len() }

// take returns user's live session, counted busy, or nil.
func (a *accounts) take(user string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	ss := a.sessions[user]
	if ss == nil {
		return nil
	}
	select {
	case <-ss.c.lost:
		return nil
	default:
	}
	ss.busy++
	return ss
}

// release ends a call on ss.
func (a *accounts) release(ss *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ss.busy--
	ss.last = time.Now()
}

// add keeps c as user's session, counted busy; false once closed.
func (a *accounts) add(user string, c *conn) (*session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, false
	}
	ss := &session{c: c, busy: 1, last: time.Now(), stop: make(chan struct{})}
	a.sessions[user] = ss
	a.wg.Add(1)
	return ss, true
}

// retire forgets user's session ss if it has been idle long enough; else
// it says how long until it may be.
func (a *accounts) retire(user string, ss *session) (bool, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ss.busy > 0 {
		return false, a.idle
	}
	if left := a.idle - time.Since(ss.last); left > 0 {
		return false, left
	}
	a.forget(user, ss)
	return true, 0
}

// forget drops ss from the sessions; a.mu is held.
func (a *accounts) forget(user string, ss *session) {
	if a.sessions[user] == ss {
		delete(a.sessions, user)
	}
}

// close stops every session and waits for them.
func (a *accounts) close() {
	a.mu.Lock()
	a.closed = true
	for _, ss := range a.sessions {
		close(ss.stop)
	}
	clear(a.sessions)
	a.mu.Unlock()
	a.wg.Wait()
}

// count is the number of open sessions.
func (a *accounts) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}
