package bot_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// botMessages returns what the bot sent to chat.
func botMessages(fake *tgfake.Server, chat int64) []tgfake.Message {
	var out []tgfake.Message
	for _, m := range fake.Messages(chat) {
		if m.FromID == tgfake.BotUser.ID && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// waitDocument waits for a file named name in chat and returns it.
func waitDocument(t *testing.T, fake *tgfake.Server, chat int64, name string) tgfake.Message {
	t.Helper()
	var doc tgfake.Message
	fake.WaitFor(t, 30e9, "the file "+name, func() bool {
		for _, m := range fake.Messages(chat) {
			if m.DocumentName == name {
				doc = m
				return true
			}
		}
		return false
	})
	return doc
}

// An answer too long for a few messages arrives as a file holding the
// whole of it and a message with its beginning, not as a message for
// every 4096 characters (an 8 MiB answer was 2,050 messages). The file
// holds what the chat would show, not what the model wrote: no link
// hides its target, none acts in Telegram or runs code, no image is
// fetched, no direction control turns text around.
func TestE2ELongAnswerAsFile(t *testing.T) {
	const hostile = "Sign in at [https://bank.example](https://evil.example/login), ask [support](tg://resolve?domain=evil) " +
		"or [run this](javascript:alert(1)) and [that][r].\n\n![pixel](https://evil.example/p.png) <img src=\"https://evil.example/q.png\">\n\n" +
		"Open invoice\u202Efdp.exe or invoice&#x202E;fdp.exe.\n\n[r]: tg://msg?text=hi\n\n"
	answer := strings.TrimSpace(hostile + streamed(200<<10))
	s := newStack(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text(complete(answer)) }, nil)
	h := s.start(nil)
	s.fake.Text(alice, alice, "tell me everything")
	doc := waitDocument(t, s.fake, alice, "answer.md")
	got := string(doc.Document)
	for _, want := range []string{
		"Sign in at https://bank.example (<https://evil.example/login>), ask support or run this and that.",
		"pixel (<https://evil.example/p.png>) \\<img src=\"https://evil.example/q.png\"\\>",
		`Open invoice\\u202Efdp.exe or invoice\\u202Efdp.exe.`,
		"Paragraph 0 says **something** \\& \\<more\\>.",
		"Paragraph 3000 says",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	for _, absent := range []string{"tg:", "javascript:", "![", "](", ") <img", "\u202E", "&#x202E;"} {
		if strings.Contains(got, absent) {
			t.Errorf("the file holds %q", absent)
		}
	}
	preview := waitText(t, s.fake, alice, "answer.md")
	if !strings.Contains(preview.Plain, "Paragraph 0 says something & <more>.") {
		t.Errorf("the message does not begin the answer: %.200q", preview.Plain)
	}
	waitHandled(t, h)
	if got := botMessages(s.fake, alice); len(got) > 3 {
		t.Errorf("the answer took %d messages, want the file and its beginning", len(got))
	}
}

// So does a follow-up question too long for a few messages: its buttons
// stay on the last message.
func TestE2ELongQuestionAsFile(t *testing.T) {
	question := strings.TrimSpace(streamed(100 << 10))
	s := newStack(t, func(llmfake.Call) llmfake.Reply {
		return llmfake.Text("<ask_followup_question>\n<question>" + question + "</question>\n<options>[\"yes\", \"no\"]</options>\n</ask_followup_question>")
	}, nil)
	h := s.start(nil)
	s.fake.Text(alice, alice, "ask me")
	doc := waitDocument(t, s.fake, alice, "question.md")
	if !strings.Contains(string(doc.Document), "Paragraph 100 says") {
		t.Errorf("the file does not hold the question: %.200q", doc.Document)
	}
	waitHandled(t, h)
	got := botMessages(s.fake, alice)
	if len(got) > 3 {
		t.Errorf("the question took %d messages, want the file and its beginning", len(got))
	}
	if last := got[len(got)-1]; len(last.Keyboard) == 0 {
		t.Errorf("the last message %.100q has no buttons", last.Plain)
	}
}
