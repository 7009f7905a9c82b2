package web

import (
	"net"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// A limitListener serves at most n connections at once: a connection
// beyond them is accepted, then held until one of them closes. Only one
// is held at a time (the server's accept loop waits with it), so the
// process keeps at most n+1 connections of this listener, whatever a
// client opens; the rest wait in the kernel's backlog.
//
// It is ours rather than golang.org/x/net/netutil's LimitListener, which
// is otherwise the same, to count what the operator needs to see: the
// connections open, and those that had to wait for a slot (a cap that is
// too low, or a flood).
type limitListener struct {
	net.Listener
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once
	open   prometheus.Gauge
	waited prometheus.Counter
}

func newLimitListener(l net.Listener, n int, open prometheus.Gauge, waited prometheus.Counter) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), closed: make(chan struct{}), open: open, waited: waited}
}

// Accept returns the next connection once a slot is free for it.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.waited.Inc()
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	l.open.Inc()
	return &limitConn{Conn: c, release: sync.OnceFunc(func() {
		l.open.Dec()
		<-l.slots
	})}, nil
}

// Close closes the listener and lets go of a connection held for a slot.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// A limitConn frees its slot when it closes.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
