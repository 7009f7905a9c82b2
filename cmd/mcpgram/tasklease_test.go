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

var tasksRunning = regexp.MustCompile(`msg="server running" .*server=tasks `)

// Two instances on PostgreSQL, the one polling a task of a remote server
// killed with SIGKILL: the other takes the task over once its lease
// lapsed, and delivers its result, which the server finished meanwhile,
// once.
func TestTaskTakenOverAfterKill(t *testing.T) {
	t.Parallel()
	url, finish := testenv.TasksHTTP(t)
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return scripted("Hello.",
			"Report on moles", "Your report on moles is ready.",
			executor.TaskStarted, "The report runs in the background.",
			"report on moles", extensionCall("slow", "moles"),
			"hello again", "Hello again!")(c.Request.Messages[len(c.Request.Messages)-1].Content)
	})
	extra := map[string]any{"tasks": map[string]any{"type": "streamableHttp", "url": url, "autoApprove": []string{"slow"}}}
	// TASK_LEASE in the test's environment measures another lease.
	lease := cmp.Or(os.Getenv("TASK_LEASE"), "2s")
	cl := startClusterWith(t, testenv.Postgres(t), 2, model, nil, extra, "TASK_LEASE="+lease)
	for i := range cl.logs {
		testenv.Eventually(t, 90*time.Second, "the tasks server running in each instance", func() bool {
			return tasksRunning.MatchString(cl.logs[i].String())
		})
	}
	tg := cl.tg
	count := func(text string) int { return tg.Count(42, text) }
	asked := tg.Text(42, 42, "a report on moles, please")
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("The report runs in the background.") == 1 })
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
	finish()
	other := 1 - started
	tg.WaitFor(t, 60*time.Second, "the task's result from the other instance", func() bool { return count("Your report on moles is ready.") > 0 })
	t.Logf("the task's end delivered %s after the kill (TASK_LEASE=%s)", time.Since(killed).Round(10*time.Millisecond), lease)
	if !strings.Contains(cl.logs[other].String(), `msg="following the tasks nobody polled"`) {
		t.Error("the other instance did not log taking the task over")
	}
	// A message answered after the delivery: by then a second delivery
	// would have been sent too.
	tg.Text(42, 42, "hello again")
	tg.WaitFor(t, 30*time.Second, "the answer after the delivery", func() bool { return count("Hello again!") == 1 })
	if n := count("Your report on moles is ready."); n != 1 {
		t.Errorf("the task's result came %d times, want once", n)
	}
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "Your report on moles is ready.") && m.ReplyTo != asked {
			t.Errorf("the result replies to message %d, want %d (the request)", m.ReplyTo, asked)
		}
	}
}
