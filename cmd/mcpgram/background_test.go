package main_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// backgroundRig is a taskRig whose bot runs the test servers echo (its
// meet returns once two calls of it are in flight: the test lets one go
// with another) and f (its wait, until cancelled), and sends a plain call
// on in the background after 200ms; its model answers as the script of
// backgroundReplies says.
func backgroundRig(t *testing.T) *taskRig {
	t.Helper()
	rig := newRigOf(t, map[string]any{"echo": testenv.EchoEntry(t, "meet"), "f": testenv.FeaturesEntry(t, false, "wait")}, backgroundReplies)
	rig.env = []string{"BACKGROUND_AFTER=200ms"}
	return rig
}

// backgroundReplies is the model of backgroundRig: the first of its
// cases that the last message holds gives the reply.
func backgroundReplies(last string) llmfake.Reply {
	call := func(server, tool, args string) llmfake.Reply {
		return llmfake.Text("<use_mcp_tool><server_name>" + server + "</server_name><tool_name>" + tool + "</tool_name><arguments>" + args + "</arguments></use_mcp_tool>")
	}
	switch {
	case strings.Contains(last, "The background task of this call is done"):
		return llmfake.Text("We met, as you asked.")
	case strings.Contains(last, "The background task of this call was cancelled"):
		return llmfake.Text("Stopped, as you asked.")
	case strings.Contains(last, "The bot stopped or restarted while this call ran"):
		return llmfake.Text("Sorry: the bot stopped, and the wait with it.")
	case strings.Contains(last, agent.CallInBackground):
		return llmfake.Text("It goes on in the background.")
	case strings.Contains(last, "Result:\nmet"):
		return llmfake.Text("Let go.")
	case strings.Contains(last, "meet me"), strings.Contains(last, "let go"):
		return call("echo", "meet", `{"n": 2}`)
	case strings.Contains(last, "wait for me"):
		return call("f", "wait", `{}`)
	}
	return llmfake.Text("Hello meanwhile!")
}

// A plain call past BACKGROUND_AFTER frees the chat: its card shows, the
// bot answers other messages while it runs, /tasks lists it, its result
// comes as a reply to the message that asked, once; a Stop cancels
// another such call, and the chat is told. The real binary, with the
// Telegram and model fakes.
func TestCallInTheBackgroundAnswersLater(t *testing.T) {
	t.Parallel()
	rig := backgroundRig(t)
	tg, cmd := rig.tg, rig.start(t)
	count := func(text string) int { return tg.Count(42, text) }
	waitForTool(t, tg, 42, "meet")
	waitForTool(t, tg, 42, "wait")

	asked := tg.Text(42, 42, "meet me")
	tg.WaitFor(t, 30*time.Second, "the call's card", func() bool { return count("Working on it: meet on echo") == 1 })
	tg.WaitFor(t, 30*time.Second, "the turn's answer", func() bool { return count("It goes on in the background.") == 1 })
	tg.Text(42, 42, "hi")
	tg.WaitFor(t, 30*time.Second, "an answer while the call runs", func() bool { return count("Hello meanwhile!") == 1 })
	tg.Text(42, 42, "/tasks")
	tg.WaitFor(t, 30*time.Second, "/tasks", func() bool { return count("Running in this chat: 1") == 1 })
	if msgs := tg.Messages(42); !strings.Contains(msgs[len(msgs)-1].Plain, "1. meet on echo") {
		t.Errorf("/tasks = %q, want the call", msgs[len(msgs)-1].Plain)
	}
	if count("We met") != 0 {
		t.Fatal("the result came before the test let the call go")
	}
	tg.Text(42, 42, "let go")
	tg.WaitFor(t, 30*time.Second, "the call's result", func() bool { return count("We met, as you asked.") == 1 })
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Plain, "We met") && m.ReplyTo != asked {
			t.Errorf("the result replies to message %d, want %d (the request)", m.ReplyTo, asked)
		}
	}

	tg.Text(42, 42, "wait for me")
	card := taskCard(t, tg, "Working on it: wait on f")
	tg.Press(42, 42, card.ID, *card.Keyboard[0][0].CallbackData)
	tg.WaitFor(t, 30*time.Second, "the chat told of the stop", func() bool { return count("Stopped, as you asked.") == 1 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Process.Wait(); err != nil {
		t.Error(err)
	}
	if n := count("We met, as you asked."); n != 1 {
		t.Errorf("the result came %d times, want once", n)
	}
}

// A call in the background does not outlive the bot: a graceful stop
// cuts it short and tells the chat; one that a kill -9 left is told lost
// at the next start, once; each as a reply to the message that asked.
func TestCallInTheBackgroundEndsWithTheBot(t *testing.T) {
	t.Parallel()
	rig := backgroundRig(t)
	tg := rig.tg
	const lost = "the bot stopped, and the wait with it"
	// told counts the messages that say the call of request was lost.
	told := func(request int) int {
		n := 0
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Plain, lost) && m.ReplyTo == request {
				n++
			}
		}
		return n
	}
	goesOn := func(n int) func() bool {
		return func() bool { return tg.Count(42, "It goes on in the background.") == n }
	}
	first := rig.start(t)
	waitForTool(t, tg, 42, "wait")
	asked := tg.Text(42, 42, "wait for me")
	tg.WaitFor(t, 30*time.Second, "the turn's answer", goesOn(1))
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Process.Wait(); err != nil {
		t.Error(err)
	}
	if n := told(asked); n != 1 {
		t.Errorf("the chat was told %d times that the stop cut the call short, want once", n)
	}

	second := rig.start(t)
	waitForTool(t, tg, 42, "wait")
	asked = tg.Text(42, 42, "wait for me")
	tg.WaitFor(t, 30*time.Second, "the second turn's answer", goesOn(2))
	if err := second.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = second.Process.Wait()
	third := rig.start(t)
	tg.WaitFor(t, 60*time.Second, "the lost call told after the restart", func() bool { return told(asked) > 0 })
	waitForTool(t, tg, 42, "wait")
	if n := told(asked); n != 1 {
		t.Errorf("told %d times after the restart, want once", n)
	}
	if err := third.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = third.Process.Wait()
}

// taskCard waits for the card holding text with its Stop button.
func taskCard(t *testing.T, tg *tgfake.Server, text string) tgfake.Message {
	t.Helper()
	var card tgfake.Message
	tg.WaitFor(t, 30*time.Second, "the card "+text, func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Plain, text) && len(m.Keyboard) == 1 {
				card = m
				return true
			}
		}
		return false
	})
	return card
}
