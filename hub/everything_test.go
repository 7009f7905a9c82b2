package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// TestInteropEverything runs the MCP reference server
// @modelcontextprotocol/server-everything through the hub: listing, calls,
// an image, resources, a clean environment and concurrent calls. The other
// tests use hub/testdata/echo; this one skips where Node is absent.
func TestInteropEverything(t *testing.T) {
	t.Setenv("TELEGRAM_BOT_TOKEN", "123:secret-token")
	h, _ := startHub(t, map[string]any{"everything": testenv.EverythingEntry(t)})
	s := server(t, h, "everything")
	if s.Status != mcpgram.StatusRunning {
		t.Fatalf("status = %s (%s)", s.Status, s.Error)
	}

	t.Run("listing", func(t *testing.T) {
		for _, name := range []string{"echo", "get-sum", "get-tiny-image", "get-env"} {
			if tool, ok := s.Tool(name); !ok || !json.Valid(tool.InputSchema) {
				t.Errorf("tool %s: found %v, schema %s", name, ok, tool.InputSchema)
			}
		}
		if len(s.Resources) == 0 || !strings.HasPrefix(s.Resources[0].URI, "demo://") {
			t.Errorf("resources = %+v, want demo:// ones", s.Resources)
		}
		if len(s.ResourceTemplates) == 0 {
			t.Errorf("no resource templates")
		}
	})

	t.Run("prompts", func(t *testing.T) {
		if _, ok := s.Prompt("args-prompt"); !ok {
			t.Fatalf("prompts = %+v, want args-prompt among them", s.Prompts)
		}
		ctx := context.Background()
		res, err := h.GetPrompt(ctx, mcpgram.Caller{}, "everything", "args-prompt", map[string]string{"city": "Oslo"})
		if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.Text != "What's weather in Oslo?" {
			t.Errorf("args-prompt = %+v, %v", res, err)
		}
		// The second argument's suggestions depend on the first.
		got, err := h.Complete(ctx, mcpgram.Caller{}, "everything", "completable-prompt", "name", "", map[string]string{"department": "Sales"})
		if err != nil || strings.Join(got, ",") != "David,Eve,Frank" {
			t.Errorf("completions = %q, %v; want David,Eve,Frank", got, err)
		}
	})

	t.Run("echo", func(t *testing.T) {
		if got := call(t, h, "everything", "echo", map[string]any{"message": "hello"}).Text(); got != "Echo: hello" {
			t.Errorf("echo = %q", got)
		}
		if got := call(t, h, "everything", "get-sum", map[string]any{"a": 2, "b": 40}).Text(); !strings.Contains(got, "42") {
			t.Errorf("get-sum = %q, want 42 in it", got)
		}
	})

	t.Run("image", func(t *testing.T) {
		res := call(t, h, "everything", "get-tiny-image", nil)
		imgs := res.Images()
		if len(imgs) != 1 || imgs[0].MIMEType != "image/png" || !bytes.HasPrefix(imgs[0].Data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("images = %+v, want one decoded PNG", imgs)
		}
		if res.Text() == "" {
			t.Errorf("the text around the image is lost")
		}
	})

	t.Run("resources", func(t *testing.T) {
		for _, r := range s.Resources {
			res, err := h.ReadResource(context.Background(), local, "everything", r.URI)
			if err != nil {
				t.Fatalf("ReadResource(%s): %v", r.URI, err)
			}
			if len(res.Content) == 0 || res.Content[0].URI != r.URI || (res.Content[0].Text == "" && len(res.Content[0].Data) == 0) {
				t.Errorf("ReadResource(%s) = %+v", r.URI, res.Content)
			}
		}
	})

	t.Run("environment", func(t *testing.T) {
		env := call(t, h, "everything", "get-env", nil).Text()
		if strings.Contains(env, "TELEGRAM_BOT_TOKEN") || strings.Contains(env, "secret-token") {
			t.Errorf("server-everything sees the bot's token")
		}
		if !strings.Contains(env, `"PATH"`) {
			t.Errorf("server-everything lacks PATH")
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var got []string
		for i := range 50 {
			wg.Go(func() {
				msg := strings.Repeat("x", i)
				res, err := h.CallTool(context.Background(), local, "everything", "echo", map[string]any{"message": msg})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, strings.TrimPrefix(res.Text(), "Echo: "))
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.SortFunc(got, func(a, b string) int { return len(a) - len(b) })
		for i, g := range got {
			if len(g) != i {
				t.Fatalf("answers mixed up: %d-th is %q", i, g)
			}
		}
	})
}
