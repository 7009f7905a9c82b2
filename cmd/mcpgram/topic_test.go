package main_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// `mcpgram run` in a forum: each topic is answered in that topic, as a
// conversation of its own (a turn in one never reads another's), and
// follows the servers its group turned off in /tools.
func TestRunForumTopics(t *testing.T) {
	const forum = -1001
	path := settings(t, nil)
	tg := tgfake.New(t)
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return llmfake.Text("<attempt_completion><result>Answered: " + c.Request.Last() + "</result></attempt_completion>")
	})
	e := runEnv(t, tg, model.URL())
	db, err := sqlite.Open(context.Background(), e["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetChatServersOff(context.Background(), "-1001", []string{"calculator"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, stop := startRun(t, e, path)
	defer stop()

	seven, nine := tg.CreateTopic(forum, "seven"), tg.CreateTopic(forum, "nine")
	tg.Send(tgfake.Incoming{ChatID: forum, UserID: 42, Topic: seven, Text: "@mcpgram_bot the word is lapis"})
	tg.WaitIn(t, forum, seven, "Answered: the word is lapis")
	tg.Send(tgfake.Incoming{ChatID: forum, UserID: 42, Topic: nine, Text: "@mcpgram_bot what is the word?"})
	tg.WaitIn(t, forum, nine, "Answered: what is the word?")

	calls := model.Calls()
	req := calls[len(calls)-1].Request
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "lapis") {
			t.Errorf("topic nine's turn read topic seven's conversation: %q", m.Content)
		}
	}
	if sys := req.Messages[0].Content; strings.Contains(sys, "## calculator") || !strings.Contains(sys, "## clock") {
		t.Errorf("topic nine's prompt does not follow its group's /tools (calculator off, clock on)")
	}
	if got := tg.MessagesIn(forum, 0); len(got) != 0 {
		t.Errorf("General got %d messages, want none", len(got))
	}
}
