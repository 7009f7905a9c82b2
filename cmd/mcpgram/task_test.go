package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// A call server-everything runs as a task frees the chat: the bot answers
// another message while it runs, and the task's result comes later, as a
// reply to the message that asked for it. The real binary, with the
// Telegram and model fakes.
func TestTaskAnswersLater(t *testing.T) {
	t.Parallel()
	rig := newTaskRig(t, func(last string) llmfake.Reply {
		switch {
		case strings.Contains(last, "The background task of this call is done"):
			return llmfake.Text("Your report is ready: " + strings.SplitN(strings.SplitN(last, "# ", 2)[1], "\n", 2)[0])
		case strings.Contains(last, executor.TaskStarted):
			return llmfake.Text("The research runs in the background.")
		case strings.Contains(last, "research otters"):
			return llmfake.Text(researchCall("otters"))
		}
		return llmfake.Text("Hello meanwhile!")
	})
	tg, cmd := rig.tg, rig.start(t)
	waitForSlowTool(t, tg, 42, "simulate-research-query")

	asked := tg.Text(42, 42, "research otters")
	saw := func(text string) func() bool {
		return func() bool {
			for _, m := range tg.Messages(42) {
				if strings.Contains(m.Plain, text) {
					return true
				}
			}
			return false
		}
	}
	tg.WaitFor(t, 30*time.Second, "the task's card", saw("Working on it: simulate-research-query on everything"))
	tg.WaitFor(t, 30*time.Second, "the turn's answer", saw("The research runs in the background."))
	tg.Text(42, 42, "hi")
	tg.WaitFor(t, 30*time.Second, "an answer while the task runs", saw("Hello meanwhile!"))
	tg.WaitFor(t, 60*time.Second, "the task's result", saw("Your report is ready: Research Report: otters"))
	n, hello := 0, -1
	for i, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "Hello meanwhile!") {
			hello = i
		}
		if strings.Contains(m.Plain, "Your report is ready") {
			if hello < 0 {
				t.Error("the result came before the answer to the message sent while the task ran")
			}
			n++
			if m.ReplyTo != asked {
				t.Errorf("the result replies to message %d, want %d (the request)", m.ReplyTo, asked)
			}
		}
	}
	if n != 1 {
		t.Errorf("the result came %d times, want once", n)
	}
	// The card followed the server's stages.
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "Working on it") && (m.Edits == 0 || strings.Contains(m.Plain, "Gathering sources")) {
			t.Errorf("the task's card = %q after %d edits, want a later stage", m.Plain, m.Edits)
		}
	}
	stopBot(t, cmd)
}

// Killed with -9 while a task runs, the bot resumes it from the store at
// the next start, with the same handle. The server-everything it then
// asks is a new process, which does not know the task: the user is told
// so, once.
func TestTaskAfterRestart(t *testing.T) {
	t.Parallel()
	rig := newTaskRig(t, scripted(researchCall("voles"),
		"The server no longer knows the background task", "Sorry: the research was lost in a restart.",
		executor.TaskStarted, "The research runs in the background."))
	tg := rig.tg
	start := func() *exec.Cmd { return rig.start(t) }
	count := func(text string) int { return tg.Count(42, text) }
	first := start()
	waitForSlowTool(t, tg, 42, "simulate-research-query")
	tg.Text(42, 42, "research voles")
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("The research runs in the background.") == 1 })
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()

	second := start()
	tg.WaitFor(t, 60*time.Second, "the task's end after the restart", func() bool { return count("the research was lost") > 0 })
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Process.Wait(); err != nil {
		t.Error(err)
	}
	// A third start finds nothing left to deliver.
	third := start()
	waitForSlowTool(t, tg, 42, "simulate-research-query")
	if n := count("the research was lost"); n != 1 {
		t.Errorf("the task's end came %d times, want once", n)
	}
	if err := third.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = third.Process.Wait()
}

// waitForSlowTool is waitForTool for a server that may take seconds to
// start: server-everything is a Node process, slow on a busy machine.
func waitForSlowTool(t *testing.T, tg *tgfake.Server, chat int64, tool string) {
	t.Helper()
	testenv.Eventually(t, 90*time.Second, tool+" to be offered", func() bool {
		n := len(tg.Messages(chat))
		tg.Text(chat, chat, "/tools")
		tg.WaitFor(t, 30*time.Second, "the /tools answer", func() bool { return len(tg.Messages(chat)) > n })
		msgs := tg.Messages(chat)
		return strings.Contains(msgs[len(msgs)-1].Plain, "• "+tool)
	})
}

// The Stop button of a task's card cancels it at the server: the poller
// finds it cancelled, and the chat is told, once.
func TestTaskStop(t *testing.T) {
	t.Parallel()
	rig := newTaskRig(t, scripted(researchCall("newts"),
		"The background task of this call was cancelled.", "The research was stopped, as you asked.",
		"The background task of this call is done", "The research finished after all.",
		executor.TaskStarted, "The research runs in the background."))
	tg, cmd := rig.tg, rig.start(t)
	waitForSlowTool(t, tg, 42, "simulate-research-query")
	tg.Text(42, 42, "research newts")
	card := taskCard(t, tg, "Working on it")
	if got := card.Keyboard[0][0]; got.Text != "⏹ Stop" || got.CallbackData == nil {
		t.Fatalf("the card's button = %+v, want Stop", got)
	}
	// Someone else's press, and a forged one, stop nothing.
	for _, press := range []struct {
		user int64
		data string
	}{{43, *card.Keyboard[0][0].CallbackData}, {42, "k:999999"}} {
		id := tg.Press(42, press.user, card.ID, press.data)
		var answer tgfake.CallbackAnswer
		tg.WaitFor(t, 30*time.Second, "the press answered", func() bool {
			var ok bool
			answer, ok = tg.Answer(id)
			return ok
		})
		if !strings.Contains(answer.Text, "Only the person who asked") && !strings.Contains(answer.Text, "over") {
			t.Errorf("a press by %d of %s answered %+v, want a refusal", press.user, press.data, answer)
		}
	}
	tg.Press(42, 42, card.ID, *card.Keyboard[0][0].CallbackData)
	count := func(text string) int { return tg.Count(42, text) }
	tg.WaitFor(t, 30*time.Second, "the chat told of the stop", func() bool { return count("stopped, as you asked") > 0 })
	if count("finished after all") != 0 || count("stopped, as you asked") != 1 {
		t.Errorf("messages: %d stops, %d results; want one stop and no result", count("stopped, as you asked"), count("finished after all"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
}

// A taskRig is the bot's binary, settings that offer server-everything's
// research tool, and the fakes of Telegram and the model, for the tests
// of tasks.
type taskRig struct {
	b        *binary
	settings string
	tg       *tgfake.Server
	model    *llmfake.Server
	// env is added to the bot's environment.
	env []string
}

// newTaskRig makes a rig whose model answers the last message of each
// request with answer.
func newTaskRig(t *testing.T, answer func(last string) llmfake.Reply) *taskRig {
	t.Helper()
	return newRigOf(t, map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")}, answer)
}

// newRigOf is newTaskRig with servers as the settings file's entries.
func newRigOf(t *testing.T, servers map[string]any, answer func(last string) llmfake.Reply) *taskRig {
	t.Helper()
	b := buildBinary(t)
	return &taskRig{
		b:        b,
		settings: testenv.WriteSettings(t, b.dir, servers),
		tg:       tgfake.New(t),
		model: llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
			return answer(c.Request.Messages[len(c.Request.Messages)-1].Content)
		}),
	}
}

// scripted answers with the reply after the first of pairs (text, reply)
// whose text the last message holds, and with otherwise when none does.
func scripted(otherwise string, pairs ...string) func(last string) llmfake.Reply {
	return func(last string) llmfake.Reply {
		for i := 0; i+1 < len(pairs); i += 2 {
			if strings.Contains(last, pairs[i]) {
				return llmfake.Text(pairs[i+1])
			}
		}
		return llmfake.Text(otherwise)
	}
}

// researchCall is the model's call of the research tool on topic.
func researchCall(topic string) string {
	return `<use_mcp_tool><server_name>everything</server_name><tool_name>simulate-research-query</tool_name><arguments>{"topic": "` + topic + `"}</arguments></use_mcp_tool>`
}

// start starts `mcpgram run` on the rig's SQLite database against the
// fakes, for user 42 alone; the test's end kills it if it still runs.
func (r *taskRig) start(t *testing.T) *exec.Cmd {
	t.Helper()
	b, tg, model := r.b, r.tg, r.model
	cmd := exec.Command(b.path, "--mcp-settings", r.settings, "run")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir,
		"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
		"DATABASE_PATH=" + filepath.Join(b.dir, "mcpgram.db"), "ALLOWED_USER_IDS=42", "RATE_LIMIT_PER_MINUTE=1000"}
	cmd.Env = append(cmd.Env, r.env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd
}

// The Tasks extension of 2026-07-28, with hub/testdata/tasks: the call
// becomes a task whose card shows, the chat answers another message
// while it runs, the question the task then asks comes as a form card to
// its user, whose answer goes back to the server, and the result comes
// as a reply to the message that asked.
func TestTaskExtensionAsksAndAnswersLater(t *testing.T) {
	t.Parallel()
	rig := newRigOf(t, map[string]any{"tasks": testenv.TasksEntry(t, "ask")}, scripted("Hello meanwhile!",
		"A thorough report on otters", "Your report is ready: a thorough one on otters.",
		executor.TaskStarted, "The report runs in the background.",
		"report on otters", extensionCall("ask", "otters")))
	tg, cmd := rig.tg, rig.start(t)
	waitForSlowTool(t, tg, 42, "ask")
	asked := tg.Text(42, 42, "a report on otters, please")
	count := func(text string) int { return tg.Count(42, text) }
	tg.WaitFor(t, 30*time.Second, "the task's card", func() bool { return count("Working on it: ask on tasks") > 0 })
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("The report runs in the background.") > 0 })
	tg.Text(42, 42, "hi")
	tg.WaitFor(t, 30*time.Second, "an answer while the task runs", func() bool { return count("Hello meanwhile!") > 0 })

	card := formCard(t, tg, 42, "How deep should the report on otters go?", 0)
	pressOn(t, tg, 42, card, "thorough")
	pressOn(t, tg, 42, formCard(t, tg, 42, "All fields asked", 0), "✅ Submit")
	tg.WaitFor(t, 30*time.Second, "the task's result", func() bool { return count("Your report is ready") > 0 })
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "Your report is ready") && m.ReplyTo != asked {
			t.Errorf("the result replies to message %d, want %d (the request)", m.ReplyTo, asked)
		}
	}
	if n := count("Your report is ready"); n != 1 {
		t.Errorf("the result came %d times, want once", n)
	}
	stopBot(t, cmd)
}

// The Stop button of a task of the Tasks extension cancels it at the
// server (tasks/cancel): the poller finds it cancelled, the question the
// task was asking closes, and the chat is told, once.
func TestTaskExtensionStop(t *testing.T) {
	t.Parallel()
	rig := newRigOf(t, map[string]any{"tasks": testenv.TasksEntry(t, "ask")}, scripted(extensionCall("ask", "newts"),
		"The background task of this call was cancelled.", "The report was stopped, as you asked.",
		executor.TaskStarted, "The report runs in the background."))
	tg, cmd := rig.tg, rig.start(t)
	waitForSlowTool(t, tg, 42, "ask")
	tg.Text(42, 42, "a report on newts")
	card := taskCard(t, tg, "Working on it: ask on tasks")
	formCard(t, tg, 42, "How deep should the report on newts go?", 0)
	pressOn(t, tg, 42, card, "⏹ Stop")
	count := func(text string) int { return tg.Count(42, text) }
	tg.WaitFor(t, 30*time.Second, "the chat told of the stop", func() bool { return count("stopped, as you asked") > 0 })
	tg.WaitFor(t, 30*time.Second, "the question closed", func() bool { return count("ended before the form was answered") > 0 })
	if n := count("stopped, as you asked"); n != 1 {
		t.Errorf("the stop was told %d times, want once", n)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
}

// extensionCall is the model's call of tool of hub/testdata/tasks on
// topic, in more steps than a test waits for.
func extensionCall(tool, topic string) string {
	return `<use_mcp_tool><server_name>tasks</server_name><tool_name>` + tool + `</tool_name><arguments>{"topic": "` + topic + `", "steps": 100000}</arguments></use_mcp_tool>`
}

// A 2025-11-25 task that needs input (server-everything's ambiguous
// research) asks on a form card too: its question comes while the bot
// holds tasks/result open, the answer reaches the server, and the report
// follows it.
func TestTaskAsksIn2025Form(t *testing.T) {
	t.Parallel()
	call := `<use_mcp_tool><server_name>everything</server_name><tool_name>simulate-research-query</tool_name><arguments>{"topic": "python", "ambiguous": true}</arguments></use_mcp_tool>`
	rig := newTaskRig(t, scripted(call,
		"python (snake)", "Your report on the snake is ready.",
		executor.TaskStarted, "The research runs in the background."))
	tg, cmd := rig.tg, rig.start(t)
	waitForSlowTool(t, tg, 42, "simulate-research-query")
	tg.Text(42, 42, "research python")
	card := formCard(t, tg, 42, "could have multiple interpretations", 0)
	pressOn(t, tg, 42, card, "Python snake species")
	pressOn(t, tg, 42, formCard(t, tg, 42, "All fields asked", 0), "✅ Submit")
	tg.WaitFor(t, 60*time.Second, "the report", func() bool { return tg.Count(42, "Your report on the snake is ready.") > 0 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = cmd.Process.Wait()
}

// stopBot stops the bot cmd runs as an operator would, with SIGTERM, and
// reports it if it does not end well.
func stopBot(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Process.Wait(); err != nil {
		t.Error(err)
	}
}

// Killed with -9 while a task of a remote server runs, the bot polls it
// again from the store at the next start: the server, which outlived the
// bot, finished it meanwhile, and its result reaches the chat once, as a
// reply to the message that asked; a third start delivers nothing more.
func TestTaskResultAfterAKill(t *testing.T) {
	t.Parallel()
	url, finish := testenv.TasksHTTP(t)
	rig := newRigOf(t, map[string]any{"tasks": map[string]any{"type": "streamableHttp", "url": url, "autoApprove": []string{"slow"}}}, scripted("Hello.",
		"Report on beavers", "Your report on beavers is ready.",
		executor.TaskStarted, "The report runs in the background.",
		"report on beavers", extensionCall("slow", "beavers")))
	tg := rig.tg
	first := rig.start(t)
	waitForSlowTool(t, tg, 42, "slow")
	asked := tg.Text(42, 42, "a report on beavers, please")
	count := func(text string) int { return tg.Count(42, text) }
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("The report runs in the background.") == 1 })
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()
	finish()

	second := rig.start(t)
	tg.WaitFor(t, 60*time.Second, "the result after the restart", func() bool { return count("Your report on beavers is ready.") > 0 })
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "Your report on beavers is ready.") && m.ReplyTo != asked {
			t.Errorf("the result replies to message %d, want %d (the request)", m.ReplyTo, asked)
		}
	}
	stopBot(t, second)
	third := rig.start(t)
	waitForSlowTool(t, tg, 42, "slow")
	if n := count("Your report on beavers is ready."); n != 1 {
		t.Errorf("the result came %d times, want once", n)
	}
	stopBot(t, third)
}
