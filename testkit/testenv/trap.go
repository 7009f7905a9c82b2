package testenv

import (
	"net"
	"testing"
)

// A Trap is a TCP port of 127.0.0.1 where nothing should connect: it
// takes each connection, closes it unanswered, and counts it, so that a
// test can prove that nothing was sent there.
type Trap struct {
	ln       net.Listener
	accepted chan string
	contacts int
}

// StartTrap starts a Trap, stopped when the test ends.
func StartTrap(t testing.TB) *Trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trap{ln: ln, accepted: make(chan string)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			from := c.RemoteAddr().String()
			_ = c.Close()
			select {
			case tr.accepted <- from:
			case <-t.Context().Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return tr
}

// Port is the trap's port.
func (tr *Trap) Port() int { return tr.ln.Addr().(*net.TCPAddr).Port }

// Contacts returns how many connections the trap had so far. It connects
// to the trap itself and counts the connections taken before its own:
// the kernel queues connections in the order they came, so none made
// before the call is missed, however late the trap took it.
func (tr *Trap) Contacts(t testing.TB) int {
	t.Helper()
	c, err := net.Dial("tcp", tr.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	me := c.LocalAddr().String()
	for {
		select {
		case from := <-tr.accepted:
			if from == me {
				return tr.contacts
			}
			tr.contacts++
		case <-t.Context().Done():
			t.Fatal("the trap did not see the test's own connection")
		}
	}
}
