package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// `mcpgram run` with a second profile in mcpgram.yaml: /model switches
// the chat to it, its endpoint gets the profile's model, key, temperature,
// max tokens and prompt variant, the key never reaches the log, and the
// choice survives a restart of the process.
func TestRunModelProfiles(t *testing.T) {
	path := settings(t, nil) // and the working folder, where mcpgram.yaml is read
	tg := tgfake.New(t)
	def := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from the default") })
	coder := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from the coder") })
	yaml := "models:\n  coder:\n    base_url: " + coder.URL() + "\n    api_key_env: CODER_KEY\n    model: qwen-coder\n    temperature: 0.3\n    max_tokens: 77\n    prompt: code\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "mcpgram.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := runEnv(t, tg, def.URL())
	e["CODER_KEY"] = "sk-coder-secret"
	logs, stop := startRun(t, e, path)

	tg.Text(42, 42, "hi")
	tg.WaitText(t, 42, "from the default")
	tg.Text(42, 42, "/model")
	view := tg.WaitText(t, 42, "Model for this chat")
	if got := view.Buttons(); len(got) != 2 || got[1] != "coder · qwen-coder=m:coder" {
		t.Fatalf("buttons %q", got)
	}
	press := tg.Press(42, 42, view.ID, "m:coder")
	tg.WaitFor(t, 30*time.Second, "the press answered", func() bool {
		_, ok := tg.Answer(press)
		return ok
	})
	tg.Text(42, 42, "write me a function")
	tg.WaitText(t, 42, "from the coder")
	req := coder.Calls()[0].Request
	if req.Model != "qwen-coder" || req.MaxTokens != 77 || req.Temperature == nil || *req.Temperature < 0.299 || *req.Temperature > 0.301 {
		t.Errorf("the coder endpoint got model %q, max_tokens %d, temperature %v", req.Model, req.MaxTokens, req.Temperature)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer sk-coder-secret" {
		t.Errorf("the coder endpoint got Authorization %q", got)
	}
	if sys := req.Messages[0].Content; !strings.Contains(sys, "# Protocol") || strings.Contains(sys, "# Rules") {
		t.Errorf("the coder endpoint's prompt is not the code variant:\n%.300s", sys)
	}
	if got := def.Calls()[0].Request.Model; got != "gpt-4o-mini" {
		t.Errorf("the default endpoint got model %q, want OPENAI_MODEL's default", got)
	}
	stop()

	logs2, stop := startRun(t, e, path)
	tg.Text(42, 42, "and after a restart?")
	tg.WaitFor(t, 30*time.Second, "a second answer from the coder", func() bool { return len(coder.Calls()) == 2 })
	stop()
	for _, l := range []string{logs.String(), logs2.String()} {
		if strings.Contains(l, "sk-coder-secret") {
			t.Error("the log shows the coder's key")
		}
	}
}

// A profile whose key variable is unset stops `mcpgram run` at start,
// naming the variable and the profile; a bad field stops any command.
func TestRunProfileErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "mcpgram.yaml"), []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("models:\n  coder:\n    base_url: http://localhost:1/v1\n    api_key_env: CODER_KEY\n    model: m\n")
	_, _, err := run(t, env{"TELEGRAM_BOT_TOKEN": tgfake.Token, "OPENAI_API_KEY": "sk-x"}, "", "run")
	if err == nil || !strings.Contains(err.Error(), "CODER_KEY") || !strings.Contains(err.Error(), "models.coder.api_key_env") {
		t.Errorf("run without the coder's key: %v, want an error naming CODER_KEY and models.coder.api_key_env", err)
	}
	write("models:\n  coder:\n    base_url: http://localhost:1/v1\n    api_key_env: CODER_KEY\n    model: m\n    prompt: poem\n")
	_, _, err = run(t, env{"CODER_KEY": "k"}, "", "config")
	if err == nil || !strings.Contains(err.Error(), "models.coder.prompt") {
		t.Errorf("config with a bad prompt: %v, want an error naming models.coder.prompt", err)
	}
}
