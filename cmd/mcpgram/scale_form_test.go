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

// bookModel calls the features server's book, then reports its result.
func bookModel(c llmfake.Call) llmfake.Reply {
	last := c.Request.Messages[len(c.Request.Messages)-1].Content
	if _, after, ok := strings.Cut(last, "] Result:"); ok {
		return llmfake.Text("<attempt_completion><result>Booked: " + strings.TrimSpace(strings.Trim(strings.TrimSpace(after), "`")) + "</result></attempt_completion>")
	}
	return llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>book</tool_name><arguments>{}</arguments></use_mcp_tool>`)
}

// formCard waits for the newest message of chat with buttons that
// contains want, other than skip.
func formCard(t testing.TB, tg *tgfake.Server, chat int64, want string, skip int) tgfake.Message {
	t.Helper()
	var card tgfake.Message
	tg.WaitFor(t, 60*time.Second, "a form card with "+want, func() bool {
		for _, m := range tg.Messages(chat) {
			if m.ID != skip && len(m.Keyboard) > 0 && strings.Contains(m.Plain, want) {
				card = m
			}
		}
		return card.ID != 0
	})
	return card
}

// pressOn presses the button of card whose text starts with label, and
// waits for the press's answer.
func pressOn(t testing.TB, tg *tgfake.Server, chat int64, card tgfake.Message, label string) tgfake.CallbackAnswer {
	t.Helper()
	return pressAs(t, tg, chat, chat, card, label)
}

// pressAs is pressOn by user.
func pressAs(t testing.TB, tg *tgfake.Server, chat, user int64, card tgfake.Message, label string) tgfake.CallbackAnswer {
	t.Helper()
	for _, b := range card.Buttons() {
		text, data, _ := strings.Cut(b, "=")
		if strings.HasPrefix(text, label) {
			id := tg.Press(chat, user, card.ID, data)
			var ans tgfake.CallbackAnswer
			tg.WaitFor(t, 60*time.Second, "the answer to "+label, func() bool {
				var ok bool
				ans, ok = tg.Answer(id)
				return ok
			})
			return ans
		}
	}
	t.Fatalf("no button %q on the card: %q", label, card.Buttons())
	return tgfake.CallbackAnswer{}
}

// fillBooking answers the open booking form, press by press, waiting for
// its card to move on each time, and submits it.
func fillBooking(t testing.TB, tg *tgfake.Server, chat int64) {
	t.Helper()
	tg.Text(chat, chat, "2026-12-24")
	steps := []struct{ wait, press string }{
		{"▶️ Party size", "Use default"},
		{"▶️ Seating", "Indoors"},
		{"▶️ Vegetarian", "No"},
		{"▶️ Extras", "✅ Submit"},
	}
	for _, s := range steps {
		pressOn(t, tg, chat, formCard(t, tg, chat, s.wait, 0), s.press)
	}
}

// Two instances share PostgreSQL behind one webhook URL, each update going
// to either: the form's card comes from the instance whose call waits,
// and the presses and the reply, whichever instance receives them, reach
// it; the server gets the answers.
func TestScaleFormAnsweredThroughEitherInstance(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, bookModel)
	cl := startCluster(t, 2, model, nil)
	cl.tg.Text(42, 42, "book me a table")
	formCard(t, cl.tg, 42, "f asks you, during book", 0)
	fillBooking(t, cl.tg, 42)
	cl.tg.WaitText(t, 42, `Booked: {"action":"accept","content":{"date":"2026-12-24","party":2,"seating":"indoor","vegetarian":false}}`)
	cl.hooksMu.Lock()
	presses := append([]int(nil), cl.presses...)
	cl.hooksMu.Unlock()
	if presses[0] == 0 || presses[1] == 0 {
		t.Errorf("presses received per instance %v: want both to have received some", presses)
	}
	for i := range cl.procs {
		cl.stop(t, i)
	}
	cl.backlog(t)
}

// The instance whose call waits for a form dies: the call is lost with
// it. The other instance takes the chat and runs its message again; the
// old card no longer takes a press, and the new one is answered.
func TestScaleFormAfterTheInstanceDies(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, bookModel)
	cl := startCluster(t, 2, model, nil)
	cl.tg.Text(42, 42, "book me a table")
	old := formCard(t, cl.tg, 42, "f asks you, during book", 0)
	asked := -1
	for i, l := range cl.logs {
		if strings.Contains(l.String(), "model call") {
			asked = i
		}
	}
	if asked < 0 {
		t.Fatal("no instance logged the model call")
	}
	cl.kill(t, asked)
	formCard(t, cl.tg, 42, "f asks you, during book", old.ID)
	if ans := pressOn(t, cl.tg, 42, old, "✅ Submit"); !strings.Contains(ans.Text, "no longer open") {
		t.Errorf("a press on the dead call's card: %+v", ans)
	}
	fillBooking(t, cl.tg, 42)
	cl.tg.WaitText(t, 42, `Booked: {"action":"accept"`)
	cl.stop(t, 1-asked)
	cl.backlog(t)
}

// Two instances share PostgreSQL behind one webhook URL: a running call's
// Stop button works whichever instance receives the press, as the chat's
// updates go to the instance that holds it. A press by another member of
// the group is refused there (which only the instance running the turn
// can tell), the user's stops the call.
func TestScaleStopThroughEitherInstance(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Messages[len(c.Request.Messages)-1].Content
		if strings.Contains(last, "Error:") || strings.Contains(last, "Result:") {
			return llmfake.Text("<attempt_completion><result>after the call</result></attempt_completion>")
		}
		return llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>wait</tool_name><arguments>{}</arguments></use_mcp_tool>`)
	})
	cl := startCluster(t, 2, model, nil)
	const group, alice, bob = -43, 43, 44
	cl.tg.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot wait for it"})
	var status tgfake.Message
	cl.tg.WaitFor(t, 60*time.Second, "the status with its progress", func() bool {
		for _, m := range cl.tg.Messages(group) {
			if strings.Contains(m.Plain, "25%, 1 of 4") && len(m.Keyboard) > 0 {
				status = m
			}
		}
		return status.ID != 0
	})
	_, data, _ := strings.Cut(status.Buttons()[0], "=")
	answer := func(user int64) tgfake.CallbackAnswer {
		id := cl.tg.Press(group, user, status.ID, data)
		var ans tgfake.CallbackAnswer
		cl.tg.WaitFor(t, 60*time.Second, "the answer to a press", func() bool {
			var ok bool
			ans, ok = cl.tg.Answer(id)
			return ok
		})
		return ans
	}
	// The proxy takes turns: of these two presses, one reaches the
	// instance that does not run the turn.
	if ans := answer(bob); !strings.Contains(ans.Text, "Only the person who asked") {
		t.Errorf("bob's press: %+v", ans)
	}
	if ans := answer(alice); ans.Text != "Stopping…" {
		t.Errorf("alice's press: %+v", ans)
	}
	cl.tg.WaitText(t, group, "Stopped.")
	cl.hooksMu.Lock()
	presses := append([]int(nil), cl.presses...)
	cl.hooksMu.Unlock()
	if presses[0] != 1 || presses[1] != 1 {
		t.Errorf("presses received per instance %v: want one each", presses)
	}
	for i := range cl.procs {
		cl.stop(t, i)
	}
	cl.backlog(t)
}

// Two instances share PostgreSQL behind one webhook URL: a prompt's form,
// opened by a command one instance receives, is filled in and submitted
// by presses the other receives (the proxy takes turns, and each press
// is checked against the form stored in the database); another member's
// press is refused there. The prompt then runs as the user's turn.
func TestScalePromptFormThroughEitherInstance(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return llmfake.Text("Hello: " + c.Request.Last())
	})
	cl := startCluster(t, 2, model, nil)
	const group, alice, bob = -45, 45, 46
	// An instance is ready before its servers are: a prompt is a command
	// only once its server runs there.
	for i, l := range cl.logs {
		testenv.Eventually(t, 60*time.Second, fmt.Sprintf("instance %d to run f", i), func() bool {
			return strings.Contains(l.String(), `msg="server running" component=hub server=f `)
		})
	}
	cl.tg.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "/greet@mcpgram_bot"})
	card := formCard(t, cl.tg, group, "Prompt greet of f", 0)
	if ans := pressAs(t, cl.tg, group, bob, card, "💡 Grace"); !ans.ShowAlert || !strings.Contains(ans.Text, "only they can fill it in") {
		t.Errorf("bob's press: %+v", ans)
	}
	pressAs(t, cl.tg, group, alice, card, "💡 Grace")
	card = formCard(t, cl.tg, group, "✔️ who: Grace", 0)
	var submit string
	for _, b := range card.Buttons() {
		if text, data, _ := strings.Cut(b, "="); strings.HasPrefix(text, "✅ Submit") {
			submit = data
		}
	}
	pressAs(t, cl.tg, group, alice, card, "✅ Submit")
	cl.tg.WaitText(t, group, "Sent the prompt greet of f:\nPlease greet Grace.")
	cl.tg.WaitText(t, group, "Hello: Please greet Grace.")
	opened, submitted := cl.receiver("/greet@mcpgram_bot"), cl.receiver(`"data":"`+submit+`"`)
	if opened < 0 || submitted < 0 || opened == submitted {
		t.Errorf("the command went to instance %d and the Submit press to %d: want one each", opened, submitted)
	}
	for i := range cl.procs {
		cl.stop(t, i)
	}
	cl.backlog(t)
}

// Two instances share PostgreSQL: the resource links a tool returned are
// stored there, so with the instance that showed them killed, the other
// takes a press on a link's button, checks it (another member is
// refused) and sends the resource.
func TestScaleResourceLinkAfterATakeover(t *testing.T) {
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Messages[len(c.Request.Messages)-1].Content
		if strings.Contains(last, "Result:") || strings.Contains(last, "Error:") {
			return llmfake.Text("<attempt_completion><result>Here it is.</result></attempt_completion>")
		}
		return llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>report</tool_name><arguments>{}</arguments></use_mcp_tool>`)
	})
	cl := startCluster(t, 2, model, nil, "AUTO_APPROVE=all")
	const group, alice, bob = -47, 47, 48
	cl.tg.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot the report please"})
	links := formCard(t, cl.tg, group, "returned 2 links to open", 0)
	cl.tg.WaitText(t, group, "Here it is.")
	shown := cl.killModelCaller(t)

	if ans := pressAs(t, cl.tg, group, bob, links, "🖼 chart.png"); !strings.Contains(ans.Text, "Only the person who asked") {
		t.Errorf("another member's press: %+v", ans)
	}
	pressAs(t, cl.tg, group, alice, links, "🖼 chart.png")
	cl.tg.WaitFor(t, 60*time.Second, "the chart as a photo", func() bool {
		for _, m := range cl.tg.Messages(group) {
			if len(m.Photo) > 0 && strings.HasPrefix(m.Caption, "chart.png · f") {
				return true
			}
		}
		return false
	})
	cl.stop(t, 1-shown)
	cl.backlog(t)
}
