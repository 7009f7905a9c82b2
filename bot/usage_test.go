package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// /usage shows the tokens of the turns the user ran, as the model's
// provider counted them; over the daily budget a user's message is
// refused with when it resets, without calling the model, while an admin
// carries on.
func TestE2EUsageAndBudget(t *testing.T) {
	s := newStack(t, scriptedModel(0), func(_ *mcpgram.Profile, o *agent.Options) { o.TokenBudgetPerUserDay = 1 })
	s.start(nil)

	s.fake.Text(alice, alice, "hi there")
	waitText(t, s.fake, alice, "Hello! You said: hi there")
	calls := s.model.Calls()
	if len(calls) != 1 {
		t.Fatalf("model called %d times, want 1", len(calls))
	}
	// llmfake reports a quarter of the bytes of each message, and of the reply.
	in := 0
	for _, m := range calls[0].Request.Messages {
		in += len(m.Content) / 4
	}
	out := len("Hello! You said: hi there") / 4

	s.fake.Text(alice, alice, "and again")
	waitText(t, s.fake, alice, fmt.Sprintf("You have used today's token budget (%d of 1 tokens). It resets at 00:00 UTC, in ", in+out))
	if n := len(s.model.Calls()); n != 1 {
		t.Errorf("model called %d times, want 1: the message over budget reached it", n)
	}

	s.fake.Text(alice, alice, "/usage")
	usage := waitText(t, s.fake, alice, "Your token usage")
	for _, want := range []string{
		fmt.Sprintf("Today: %d tokens (%d in, %d out)", in+out, in, out),
		fmt.Sprintf("This month: %d tokens (%d in, %d out)", in+out, in, out),
		"Daily budget: 1 tokens, 0 left.\nResets at 00:00 UTC, in ",
	} {
		if !strings.Contains(usage.Plain, want) {
			t.Errorf("/usage = %q, want it to say %q", usage.Plain, want)
		}
	}

	// An admin is exempt: over budget after the first turn, the second runs.
	s.fake.Text(admin, admin, "first")
	waitText(t, s.fake, admin, "Hello! You said: first")
	s.fake.Text(admin, admin, "second")
	waitText(t, s.fake, admin, "Hello! You said: second")
	s.fake.Text(admin, admin, "/usage")
	usage = waitText(t, s.fake, admin, "Your token usage")
	if !strings.Contains(usage.Plain, "Daily budget: 1 tokens (admins are exempt).") {
		t.Errorf("admin's /usage = %q, want the budget marked exempt", usage.Plain)
	}
	if n := countText(s.fake, admin, "token budget ("); n != 0 {
		t.Errorf("the admin was refused %d times", n)
	}
}

// A model that ends every reply with a question does not make the daily
// budget endless: the user may finish the turn that crossed the budget
// (answer its question, typed or pressed), and no more: the answer to the
// next question is refused, typed or pressed.
func TestE2EBudgetHoldsAgainstQuestions(t *testing.T) {
	for _, press := range []bool{false, true} {
		t.Run(map[bool]string{false: "typed", true: "pressed"}[press], func(t *testing.T) {
			s := newStack(t, func(llmfake.Call) llmfake.Reply {
				return llmfake.Text("<ask_followup_question>\n<question>And then?</question>\n<options>[\"go on\", \"stop\"]</options>\n</ask_followup_question>")
			}, func(_ *mcpgram.Profile, o *agent.Options) { o.TokenBudgetPerUserDay = 1 })
			s.start(nil)
			answer := func() {
				t.Helper()
				if !press {
					s.fake.Text(alice, alice, "go on")
					return
				}
				var card tgfake.Message
				for _, m := range s.fake.Messages(alice) {
					if len(m.Keyboard) > 0 {
						card = m
					}
				}
				_, data, _ := strings.Cut(card.Buttons()[0], "=")
				s.fake.Press(alice, alice, card.ID, data)
			}
			asked := func(n int) {
				t.Helper()
				s.fake.WaitFor(t, 30*time.Second, fmt.Sprintf("question %d", n), func() bool { return countText(s.fake, alice, "And then?") >= n })
			}
			s.fake.Text(alice, alice, "hi") // under the budget, and crosses it
			asked(1)
			answer() // the question of the turn that crossed it
			asked(2)
			answer() // new work
			waitText(t, s.fake, alice, "You have used today's token budget")
			if n := len(s.model.Calls()); n != 2 {
				t.Errorf("the model was called %d times, want 2: the turn that crossed the budget and the answer to its question", n)
			}
		})
	}
}
