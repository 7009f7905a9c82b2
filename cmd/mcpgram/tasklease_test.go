package main_test

import (
	"cmp"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

var everythingRunning = regexp.MustCompile(`msg="server running" .*server=everything `)

// Two instances on PostgreSQL, the one polling a task killed with
// SIGKILL: the other takes the task over once its lease lapsed, and
// delivers its end, once. The end is "lost": a stdio server runs in each
// instance, and the task died with the killed instance's server, which
// the other's does not know.
func TestTaskTakenOverAfterKill(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return scripted(researchCall("moles"),
			"The server no longer knows the background task", "Sorry: the research was lost with its instance.",
			executor.TaskStarted, "The research runs in the background.",
			"hello again", "Hello again!")(c.Request.Messages[len(c.Request.Messages)-1].Content)
	})
	extra := map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")}
	// TASK_LEASE in the test's environment measures another lease.
	lease := cmp.Or(os.Getenv("TASK_LEASE"), "2s")
	cl := startClusterWith(t, testenv.Postgres(t), 2, model, nil, extra, "TASK_LEASE="+lease)
	for i := range cl.logs {
		testenv.Eventually(t, 90*time.Second, "server-everything running in each instance", func() bool {
			return everythingRunning.MatchString(cl.logs[i].String())
		})
	}
	tg := cl.tg
	count := func(text string) int { return tg.Count(42, text) }
	tg.Text(42, 42, "research moles")
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("The research runs in the background.") == 1 })
	started := -1
	for i, logs := range cl.logs {
		if strings.Contains(logs.String(), `msg="call became a task"`) {
			started = i
		}
	}
	if started < 0 {
		t.Fatal("no instance logged the task it started")
	}
	// The turn's update marked done first: this test is of the task's
	// takeover, not of the chat's (a turn killed before its done mark
	// runs again on the other instance, as TestScaleTwoInstancesOneKilled
	// shows).
	cl.backlog(t)
	killed := time.Now()
	cl.kill(t, started)
	other := 1 - started
	tg.WaitFor(t, 60*time.Second, "the task's end from the other instance", func() bool { return count("the research was lost") > 0 })
	t.Logf("the task's end delivered %s after the kill (TASK_LEASE=%s)", time.Since(killed).Round(10*time.Millisecond), lease)
	if !strings.Contains(cl.logs[other].String(), `msg="following the tasks nobody polled"`) {
		t.Error("the other instance did not log taking the task over")
	}
	// A message answered after the delivery: by then a second delivery
	// would have been sent too.
	tg.Text(42, 42, "hello again")
	tg.WaitFor(t, 30*time.Second, "the answer after the delivery", func() bool { return count("Hello again!") == 1 })
	if n := count("the research was lost"); n != 1 {
		t.Errorf("the task's end came %d times, want once", n)
	}
}
