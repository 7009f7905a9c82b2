package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// TestTaskEverything runs tasks of the 2025-11-25 form against
// server-everything, whose simulate-research-query requires one and takes
// about four seconds.
func TestTaskEverything(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"everything": testenv.EverythingEntry(t)})
	ctx := context.Background()
	start := func(t *testing.T, topic string) *mcpgram.Task {
		t.Helper()
		res, task, err := h.StartTool(ctx, local, "everything", "simulate-research-query", map[string]any{"topic": topic}, time.Minute)
		if err != nil || res != nil || task == nil {
			t.Fatalf("StartTool = %+v, %+v, %v; want a task", res, task, err)
		}
		if task.ID == "" || task.Status != mcpgram.TaskWorking || task.PollInterval != time.Second || task.TTL != 5*time.Minute {
			// The server keeps its tasks 5 minutes whatever is asked.
			t.Errorf("task = %+v, want working, polled every 1s, kept 5m", task)
		}
		return task
	}

	t.Run("completes", func(t *testing.T) {
		t.Parallel()
		task := start(t, "otters")
		messages := map[string]bool{}
		testenv.Eventually(t, 15*time.Second, "the task to complete", func() bool {
			got, err := h.GetTask(ctx, local, "everything", task.ID)
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			messages[got.StatusMessage] = true
			return got.Status == mcpgram.TaskCompleted
		})
		if !messages["Analyzing content..."] && !messages["Synthesizing findings..."] && !messages["Generating report..."] {
			t.Errorf("status messages seen = %v, want the stages", messages)
		}
		res, err := h.TaskResult(ctx, local, "everything", task.ID)
		if err != nil || !strings.Contains(res.Text(), "Research Report: otters") {
			t.Fatalf("TaskResult = %+v, %v; want the report on otters", res, err)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		task := start(t, "moles")
		got, err := h.CancelTask(ctx, local, "everything", task.ID)
		if err != nil || got.Status != mcpgram.TaskCancelled || got.ID != task.ID {
			t.Fatalf("CancelTask = %+v, %v; want it cancelled", got, err)
		}
		if got, err := h.GetTask(ctx, local, "everything", task.ID); err != nil || got.Status != mcpgram.TaskCancelled {
			t.Errorf("GetTask after cancel = %+v, %v", got, err)
		}
	})

	t.Run("a tool without tasks gives its result", func(t *testing.T) {
		t.Parallel()
		res, task, err := h.StartTool(ctx, local, "everything", "echo", map[string]any{"message": "hi"}, 0)
		if err != nil || task != nil || res == nil || res.Text() != "Echo: hi" {
			t.Fatalf("StartTool(echo) = %+v, %+v, %v; want its result", res, task, err)
		}
	})

	t.Run("unknown task", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"no-such-task", "", "bad id", strings.Repeat("x", 200)} {
			if _, err := h.GetTask(ctx, local, "everything", id); !errors.Is(err, mcpgram.ErrTaskUnknown) {
				t.Errorf("GetTask(%q) = %v, want ErrTaskUnknown", id, err)
			}
		}
	})
}

// TestTaskNotOffered: a server that offers no tasks is never asked for one.
func TestTaskNotOffered(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	res, task, err := h.StartTool(context.Background(), local, "echo", "asked_task", nil, time.Minute)
	if err != nil || task != nil || res == nil {
		t.Fatalf("StartTool = %+v, %+v, %v; want a result", res, task, err)
	}
	if got := res.Text(); got != "task asked: false" {
		t.Errorf("the server says %q, want no task asked", got)
	}
}

// TestDecodeTask: what a server says of a task is bounded and checked.
func TestDecodeTask(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 400)
	cases := []struct {
		name, raw string
		created   bool
		wantErr   bool
		check     func(*mcpgram.Task) bool
	}{
		{"created", `{"task":{"taskId":"t1","status":"working","statusMessage":"on\nit","createdAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":5000},"_meta":{"io.modelcontextprotocol/model-immediate-response":"started"}}`, true, false,
			func(x *mcpgram.Task) bool {
				return x.ID == "t1" && x.StatusMessage == "on it" && x.TTL == time.Minute && x.PollInterval == 5*time.Second && x.ModelNote == "started" && x.CreatedAt.Equal(time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC))
			}},
		{"get", `{"taskId":"t2","status":"completed","ttl":null}`, false, false,
			func(x *mcpgram.Task) bool {
				return x.ID == "t2" && x.Status.Final() && x.TTL == 0 && x.CreatedAt.IsZero()
			}},
		{"bounded", `{"taskId":"t3","status":"working","statusMessage":"` + long + `","ttl":1e30,"pollInterval":-5}`, false, false,
			func(x *mcpgram.Task) bool {
				return len(x.StatusMessage) <= 300 && x.TTL == 7*24*time.Hour && x.PollInterval == 0
			}},
		{"created by the extension", `{"resultType":"task","taskId":"t5","status":"working","ttlMs":60000,"pollIntervalMs":5000}`, true, false,
			func(x *mcpgram.Task) bool {
				return x.ID == "t5" && x.TTL == time.Minute && x.PollInterval == 5*time.Second
			}},
		{"failed in the extension", `{"resultType":"complete","taskId":"t6","status":"failed","ttlMs":null,"error":{"code":-32603,"message":"rate\nlimited"}}`, false, false,
			func(x *mcpgram.Task) bool { return x.Status == mcpgram.TaskFailed && x.StatusMessage == "rate limited" }},
		{"no task", `{"content":[]}`, true, true, nil},
		{"a result that is no task", `{"resultType":"complete","taskId":"t7","status":"working"}`, true, true, nil},
		{"unknown status", `{"taskId":"t4","status":"sleeping"}`, false, true, nil},
		{"id with a newline", `{"taskId":"a\nb","status":"working"}`, false, true, nil},
		{"id too long", `{"taskId":"` + strings.Repeat("x", 129) + `","status":"working"}`, false, true, nil},
		{"not json", `{`, false, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hub.DecodeTask(json.RawMessage(c.raw), c.created)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if c.check != nil && !c.check(got) {
				t.Errorf("task = %+v", got)
			}
		})
	}
}

// TestTaskExtension runs tasks of 2026-07-28's Tasks extension against
// hub/testdata/tasks, which moves a task one step on at each tasks/get
// and answers the extension's methods only to requests that declare it.
func TestTaskExtension(t *testing.T) {
	t.Parallel()
	h, asker := answeringHub(t, "tasks", testenv.TasksEntry(t), map[string]any{"depth": "thorough"})
	ctx := context.Background()
	start := func(t *testing.T, tool string, args map[string]any) *mcpgram.Task {
		t.Helper()
		res, task, err := h.StartTool(ctx, local, "tasks", tool, args, time.Minute)
		if err != nil || res != nil || task == nil {
			t.Fatalf("StartTool(%s) = %+v, %+v, %v; want a task", tool, res, task, err)
		}
		if task.Status != mcpgram.TaskWorking || task.PollInterval != 200*time.Millisecond || task.TTL != time.Minute || task.CreatedAt.IsZero() {
			t.Errorf("task = %+v, want working, polled every 200ms, kept 1m", task)
		}
		return task
	}
	get := func(t *testing.T, id string) *mcpgram.Task {
		t.Helper()
		got, err := h.GetTask(ctx, local, "tasks", id)
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		return got
	}

	t.Run("completes", func(t *testing.T) {
		t.Parallel()
		task := start(t, "slow", map[string]any{"topic": "otters", "steps": 2})
		var seen []string
		for got := get(t, task.ID); !got.Status.Final(); got = get(t, task.ID) {
			seen = append(seen, got.StatusMessage)
		}
		if want := []string{"Step 1 of 2", "Step 2 of 2"}; !slices.Equal(seen, want) {
			t.Errorf("status messages = %q, want %q", seen, want)
		}
		res, err := h.TaskResult(ctx, local, "tasks", task.ID)
		if err != nil || res.Text() != "Report on otters" {
			t.Fatalf("TaskResult = %+v, %v; want the report on otters", res, err)
		}
	})

	t.Run("a plain call does not opt in", func(t *testing.T) {
		t.Parallel()
		res, err := h.CallTool(ctx, local, "tasks", "slow", map[string]any{"topic": "moles"})
		if err != nil || res.Text() != "Report on moles (no task)" {
			t.Fatalf("CallTool = %+v, %v; want the result at once", res, err)
		}
		// A tool that needs the extension is refused a plain call.
		if _, err := h.CallTool(ctx, local, "tasks", "ask", nil); err == nil || !strings.Contains(err.Error(), "capability") {
			t.Errorf("CallTool(ask) = %v, want the server's refusal", err)
		}
	})

	t.Run("a task the call did not ask for is refused", func(t *testing.T) {
		t.Parallel()
		if res, err := h.CallTool(ctx, local, "tasks", "rogue", nil); err == nil {
			t.Fatalf("CallTool(rogue) = %+v, want an error", res)
		}
	})

	t.Run("input", func(t *testing.T) {
		t.Parallel()
		task := start(t, "ask", map[string]any{"topic": "voles"})
		if got := get(t, task.ID); got.Status != mcpgram.TaskInputRequired {
			t.Fatalf("status = %s, want input_required", got.Status)
		}
		if err := h.AnswerTask(ctx, local, "tasks", "ask", task.ID); err != nil {
			t.Fatalf("AnswerTask: %v", err)
		}
		// The server lists the answered question once more: it is not asked again.
		if err := h.AnswerTask(ctx, local, "tasks", "ask", task.ID); err != nil {
			t.Fatalf("AnswerTask again: %v", err)
		}
		var mine []mcpgram.Elicitation
		for _, q := range asker.questions() {
			if strings.Contains(q.Message, "voles") {
				mine = append(mine, q)
			}
		}
		if len(mine) != 1 || mine[0].Tool != "ask" || mine[0].Server != "tasks" || mine[0].Caller != local || !strings.Contains(string(mine[0].Schema), `"depth"`) {
			t.Fatalf("questions asked = %+v, want the depth once, for the caller", mine)
		}
		if got := get(t, task.ID); got.Status != mcpgram.TaskCompleted {
			t.Fatalf("status after the answer = %s, want completed", got.Status)
		}
		res, err := h.TaskResult(ctx, local, "tasks", task.ID)
		if err != nil || res.Text() != "A thorough report on voles" {
			t.Fatalf("TaskResult = %+v, %v; want the thorough report", res, err)
		}
	})

	t.Run("too many questions", func(t *testing.T) {
		t.Parallel()
		task := start(t, "crowd", nil)
		if got := get(t, task.ID); got.Status != mcpgram.TaskInputRequired {
			t.Fatalf("status = %s, want input_required", got.Status)
		}
		if err := h.AnswerTask(ctx, local, "tasks", "crowd", task.ID); err == nil || !strings.Contains(err.Error(), "11 questions at once") {
			t.Errorf("AnswerTask = %v, want a refusal of 11 questions", err)
		}
		for _, q := range asker.questions() {
			if strings.HasPrefix(q.Message, "Question ") {
				t.Fatalf("the user was asked %q", q.Message)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		task := start(t, "slow", map[string]any{"topic": "newts", "steps": 1000})
		got, err := h.CancelTask(ctx, local, "tasks", task.ID)
		if err != nil || got.Status != mcpgram.TaskCancelled || got.ID != task.ID {
			t.Fatalf("CancelTask = %+v, %v; want it cancelled", got, err)
		}
		if _, err := h.TaskResult(ctx, local, "tasks", task.ID); err == nil {
			t.Error("TaskResult of a cancelled task gave no error")
		}
	})

	t.Run("unknown task", func(t *testing.T) {
		t.Parallel()
		if _, err := h.GetTask(ctx, local, "tasks", "no-such-task"); !errors.Is(err, mcpgram.ErrTaskUnknown) {
			t.Errorf("GetTask = %v, want ErrTaskUnknown", err)
		}
	})
}

// TestTaskExtensionNotOffered: a 2026-07-28 server that does not offer
// the Tasks extension is never told the hub speaks it.
func TestTaskExtensionNotOffered(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	res, task, err := h.StartTool(context.Background(), local, "f", "client", nil, time.Minute)
	if err != nil || task != nil || res == nil {
		t.Fatalf("StartTool = %+v, %+v, %v; want a result", res, task, err)
	}
	if got := res.Text(); !strings.Contains(got, "2026-07-28") || strings.Contains(got, "io.modelcontextprotocol/tasks") {
		t.Errorf("the server saw %s, want 2026-07-28 without the Tasks extension", got)
	}
}

// TestTaskEverythingAsks: a 2025-11-25 task that needs input asks it on
// the connection while tasks/result waits, which AnswerTask holds open:
// server-everything's ambiguous research asks which meaning is meant.
func TestTaskEverythingAsks(t *testing.T) {
	t.Parallel()
	h, asker := answeringHub(t, "everything", testenv.EverythingEntry(t), map[string]any{"interpretation": "snake"})
	ctx := context.Background()
	res, task, err := h.StartTool(ctx, local, "everything", "simulate-research-query", map[string]any{"topic": "python", "ambiguous": true}, time.Minute)
	if err != nil || res != nil || task == nil {
		t.Fatalf("StartTool = %+v, %+v, %v; want a task", res, task, err)
	}
	testenv.Eventually(t, 15*time.Second, "the task to ask", func() bool {
		got, err := h.GetTask(ctx, local, "everything", task.ID)
		if err != nil || got.Status.Final() {
			t.Fatalf("GetTask = %+v, %v", got, err)
		}
		return got.Status == mcpgram.TaskInputRequired
	})
	if err := h.AnswerTask(ctx, local, "everything", "simulate-research-query", task.ID); err != nil {
		t.Fatalf("AnswerTask: %v", err)
	}
	if q := asker.questions(); len(q) != 1 || q[0].Tool != "simulate-research-query" || q[0].Caller != local || !strings.Contains(string(q[0].Schema), "snake") {
		t.Fatalf("questions asked = %+v, want the interpretation once, for the caller", q)
	}
	got, err := h.GetTask(ctx, local, "everything", task.ID)
	if err != nil || got.Status != mcpgram.TaskCompleted {
		t.Fatalf("GetTask after the answer = %+v, %v; want completed", got, err)
	}
	res, err = h.TaskResult(ctx, local, "everything", task.ID)
	if err != nil || !strings.Contains(res.Text(), "python (snake)") {
		t.Fatalf("TaskResult = %+v, %v; want the report on the snake", res, err)
	}
}

// answeringHub starts a hub running entry as name, whose every question
// is accepted with content.
func answeringHub(t *testing.T, name string, entry, content map[string]any) (*hub.Hub, *scriptedElicitor) {
	t.Helper()
	asker := &scriptedElicitor{answer: func(mcpgram.Elicitation) mcpgram.ElicitResult {
		return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: content}
	}}
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{name: entry})
	h := testenv.StartAsking(t, path, fastOptions(), hub.Askers{Elicitor: asker})
	testenv.Running(t, h)
	return h, asker
}
