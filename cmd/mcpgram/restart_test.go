package main_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// sendAll sends every chat its messages at once, as in the scale test.
func sendAll(tg *tgfake.Server) {
	for m := 1; m <= scaleMessages; m++ {
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			tg.Text(c, c, fmt.Sprintf("please answer c%d-m%d", c, m))
		}
	}
}

// waitAllAnswered waits until every chat has an answer to each message.
func waitAllAnswered(t *testing.T, tg *tgfake.Server, timeout time.Duration) {
	t.Helper()
	tg.WaitFor(t, timeout, "every message answered", func() bool {
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			if len(answered(tg, c)) < scaleMessages {
				return false
			}
		}
		return true
	})
}

// logged counts the lines of the instances' logs that hold s.
func (cl *cluster) logged(s string) int {
	n := 0
	for _, l := range cl.logs {
		n += strings.Count(l.String(), s)
	}
	return n
}

// wrong counts the messages telling a user that their request failed.
func wrong(tg *tgfake.Server) int {
	n := 0
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		for _, m := range tg.Messages(c) {
			if m.FromID == tgfake.BotUser.ID && strings.Contains(m.Plain, "went wrong") {
				n++
			}
		}
	}
	return n
}

// A database restart loses nothing: two instances on PostgreSQL, 50 chats
// with two messages each, every turn a 300 ms tool call, and PostgreSQL
// restarted as `pg_ctl restart -m fast` does while turns run (every
// session ended with SQLSTATE 57P01). Every message is answered, in
// order, none more than twice, and nobody is told something went wrong.
func TestScaleDatabaseRestart(t *testing.T) {
	t.Parallel()
	databaseOutage(t, "after the restart", 90*time.Second, func(pg *testenv.Cluster) { pg.Restart(t) })
}

// PostgreSQL stopped for 20 s, longer than a call's retries last, while
// turns run: the turns wait for it, their updates left in the inbox, and
// run once it is back. Every message is answered, in order, none more
// than twice, and nobody is told something went wrong.
func TestScaleDatabaseStopped(t *testing.T) {
	t.Parallel()
	databaseOutage(t, "after the database came back", 120*time.Second, func(pg *testenv.Cluster) {
		pg.Stop(t)
		// The outage itself, the scenario: not a wait for a signal.
		time.Sleep(20 * time.Second)
		pg.Start(t)
	})
}

// databaseOutage starts two instances on a PostgreSQL of their own, sends
// every chat's messages, runs outage on the database once the instances
// run tool calls, and checks that every message is then answered within
// answerWithin (when is how the log says it), in order, none more than
// twice, and that nobody is told something went wrong.
func databaseOutage(t *testing.T, when string, answerWithin time.Duration, outage func(*testenv.Cluster)) {
	t.Helper()
	pg := testenv.NewCluster(t)
	model := llmfake.New(t, scaleModel)
	cl := startClusterOn(t, pg.Database(t), 2, model, []string{"sleep"}, defaultLease)
	sendAll(cl.tg)
	cl.tg.WaitFor(t, 60*time.Second, "the instances to run tool calls", func() bool {
		return len(loggedCalls(cl.calls[0]))+len(loggedCalls(cl.calls[1])) >= scaleChats/5
	})
	outage(pg)
	back := time.Now()
	waitAllAnswered(t, cl.tg, answerWithin)
	t.Logf("all answered %v %s; answers repeated: %d; updates run again: %d; chats' leases lost: %d",
		time.Since(back).Round(time.Millisecond), when, checkAnswers(t, cl.tg), cl.logged("runs again once"), cl.logged("lost the lease"))
	if n := wrong(cl.tg); n != 0 {
		t.Errorf("%d users were told something went wrong", n)
	}
	cl.stop(t, 0)
	cl.stop(t, 1)
	cl.backlog(t)
}
