package hub_test

import (
	"context"
	"encoding/json"
	"errors"
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
		{"no task", `{"content":[]}`, true, true, nil},
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
