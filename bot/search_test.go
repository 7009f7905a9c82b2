package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func searchFor(query string) string {
	return "Let me look.\n<search_tools>\n<query>" + query + "</query>\n</search_tools>"
}

// searchModel is a model shown only some tools: it searches for what it
// needs, calls what it found (or a tool it knows by name), and answers
// with the first line of what came back.
func searchModel(c llmfake.Call) llmfake.Reply {
	last := c.Request.Last()
	switch {
	case strings.Contains(last, "[search_tools for 'post a message to a slack channel']"):
		return llmfake.Text(useTool("slack", "slack_post_message", `{"channel_id": "C1", "text": "hello"}`))
	case strings.Contains(last, "[search_tools for 'keep a note']"):
		return llmfake.Text(useTool("echo", "keep", `{"mode": "write"}`))
	case strings.Contains(last, "[search_tools for 'weather']"):
		_, after, _ := strings.Cut(last, "] Result:")
		return llmfake.Text(complete("Search said: " + firstLineOf(after)))
	case strings.Contains(last, "] Result:") || strings.Contains(last, "] Error:"):
		_, after, found := strings.Cut(last, "] Result:")
		if !found {
			_, after, _ = strings.Cut(last, "] Error:")
		}
		return llmfake.Text(complete("Tool said: " + firstLineOf(after)))
	case strings.Contains(last, "post hello to slack"):
		return llmfake.Text(searchFor("post a message to a slack channel"))
	case strings.Contains(last, "open an issue"):
		return llmfake.Text(useTool("github", "create_issue", `{"owner": "o", "repo": "r", "title": "Crash <at> start"}`))
	case strings.Contains(last, "weather please"):
		return llmfake.Text(searchFor("weather"))
	case strings.Contains(last, "remember this"):
		return llmfake.Text(searchFor("keep a note"))
	}
	return llmfake.Text("Hello!")
}

// newSearchStack is a stack past the tool-search threshold: echo (echo
// auto-approved, keep needing consent), the github and slack servers of
// realtools, a threshold of 20 tools and the real prompt.
func newSearchStack(t *testing.T, calling mcpgram.ToolCalling) *stack {
	t.Helper()
	s := newServersStack(t, map[string]any{
		"echo":   testenv.EchoEntry(t, "echo"),
		"github": testenv.RealToolsEntry(t, "github", 0),
		"slack":  testenv.RealToolsEntry(t, "slack", 0),
	}, llmfake.Native(searchModel), hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, func(p *mcpgram.Profile, o *agent.Options) {
		p.ToolCalling, p.ToolSearch = calling, "20"
		o.SystemPrompt = nil
		o.PinnedTools = []mcpgram.ToolRef{{Server: "echo", Tool: "echo"}}
	})
	return s
}

// TestE2EToolSearch: in XML and native modes, through Telegram, the
// model searches, loads and calls a tool; calls one it never searched for
// by its exact name; searches in vain; and the approval and consent cards
// of what it found are the cards any call gets. /stats counts it all.
func TestE2EToolSearch(t *testing.T) {
	for _, calling := range []mcpgram.ToolCalling{mcpgram.ToolCallingXML, mcpgram.ToolCallingNative} {
		t.Run(string(calling), func(t *testing.T) {
			s := newSearchStack(t, calling)
			s.start(nil)
			cards := 0
			approve := func(want ...string) {
				t.Helper()
				cards++
				s.fake.WaitFor(t, 30*time.Second, "an approval card", func() bool { return countText(s.fake, alice, "Approval needed") == cards })
				card, _ := lastWith(s.fake, alice, "Approval needed")
				for _, w := range want {
					if !strings.Contains(card.Plain, w) {
						t.Errorf("approval card %q lacks %q", card.Plain, w)
					}
				}
				waitAnswer(t, s.fake, s.fake.Press(alice, alice, card.ID, strings.SplitN(card.Buttons()[0], "=", 2)[1]))
			}

			s.fake.Text(alice, alice, "post hello to slack")
			approve("Run slack_post_message (Post message) on slack", "• channel_id: \"C1\"", "• text: \"hello\"")
			waitText(t, s.fake, alice, `Tool said: slack_post_message ran with {"channel_id":"C1","text":"hello"}`)

			s.fake.Text(alice, alice, "open an issue about the crash")
			approve("Run create_issue (Open new issue) on github", "• title: \"Crash <at> start\"")
			waitText(t, s.fake, alice, "Tool said: create_issue ran with")

			s.fake.Text(alice, alice, "weather please")
			waitText(t, s.fake, alice, "Search said: No tool matches.")

			s.fake.Text(alice, alice, "remember this")
			consent := waitText(t, s.fake, alice, "Your consent is needed")
			if b := consent.Buttons(); len(b) != 2 || !strings.HasPrefix(b[0], "✅ I agree=") || !strings.Contains(consent.Plain, "• mode: \"write\"") {
				t.Errorf("consent card %q, buttons %q", consent.Plain, b)
			}

			for _, m := range s.fake.Messages(alice) {
				if strings.Contains(m.Plain, "search_tools") || strings.Contains(m.Plain, "<query>") {
					t.Errorf("a search shown to the user: %q", m.Plain)
				}
			}
			first := s.model.Calls()[0].Request
			if strings.Contains(first.Messages[0].Content, "slack_post_message") || len(first.Tools) > 10 {
				t.Errorf("the first call lists unpinned tools: %d functions", len(first.Tools))
			}

			s.fake.Text(admin, admin, "/stats")
			waitText(t, s.fake, admin, "Servers now")
			day, _ := lastWith(s.fake, admin, "Last 24 hours")
			for _, want := range []string{"Tool search\n3 searches, 1 found nothing\nThen called a tool found: 2 (67%)\n", "• slack/slack_post_message: found 1, called 1\n"} {
				if !strings.Contains(day.Plain, want) {
					t.Errorf("/stats says:\n%s\nwant it to say %q", day.Plain, want)
				}
			}
			// /tools is the catalog, as ever: every tool of every server.
			s.fake.Text(alice, alice, "/tools")
			s.fake.WaitFor(t, 30*time.Second, "the /tools list", func() bool { return countText(s.fake, alice, "slack_get_users") > 0 })
		})
	}
}

// TestE2ELookalikeTools: three real servers offer create_issue, one of
// them (copycat) a word-for-word copy of GitHub's. A search names each
// hit's server and marks the others that offer a tool like it, in XML
// and native mode; the approval card of GitHub's says first that the
// call goes to github, and who else offers such a tool.
func TestE2ELookalikeTools(t *testing.T) {
	model := func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		switch {
		case strings.Contains(last, "[search_tools for 'create a new issue']"):
			return llmfake.Text(useTool("github", "create_issue", `{"owner": "o", "repo": "r", "title": "Crash"}`))
		case strings.Contains(last, "] Result:"):
			return llmfake.Text(complete("Filed."))
		case strings.Contains(last, "file the crash"):
			return llmfake.Text(searchFor("create a new issue"))
		}
		return llmfake.Text("Hello!")
	}
	for _, calling := range []mcpgram.ToolCalling{mcpgram.ToolCallingXML, mcpgram.ToolCallingNative} {
		t.Run(string(calling), func(t *testing.T) {
			s := newServersStack(t, map[string]any{
				"github":  testenv.RealToolsEntry(t, "github", 0),
				"copycat": testenv.RealToolsEntry(t, "github", 0),
				"linear":  testenv.RealToolsEntry(t, "linear", 0),
			}, llmfake.Native(model), hub.Options{})
			s.agent = newAgent(t, s.db, s.hub, s.model, func(p *mcpgram.Profile, o *agent.Options) {
				p.ToolCalling, p.ToolSearch = calling, "20"
				o.SystemPrompt = nil
			})
			s.start(nil)
			s.fake.Text(alice, alice, "file the crash")
			card := waitText(t, s.fake, alice, "Approval needed")
			want := "🔐 Approval needed\n⚠️ Check the server: this call goes to github. A tool like it is also offered by copycat, linear.\nRun create_issue (Open new issue) on github with:"
			if !strings.Contains(card.Plain, want) {
				t.Errorf("approval card:\n%s\nwant it to start %q", card.Plain, want)
			}
			var result string
			for _, c := range s.model.Calls() {
				if last := c.Request.Last(); strings.Contains(last, "[search_tools for 'create a new issue']") {
					result = last
				}
			}
			marks := map[mcpgram.ToolCalling][]string{
				mcpgram.ToolCallingXML: {
					"- create_issue (server copycat; also offered by server github, and by server linear): Create a new issue in a GitHub repository.",
					"- create_issue (server github; also offered by server copycat, and by server linear): Create a new issue in a GitHub repository.",
				},
				mcpgram.ToolCallingNative: {
					"- copycat__create_issue (server copycat; also offered by server github as github__create_issue, and by server linear as linear__create_issue): Create a new issue in a GitHub repository.",
					"- github__create_issue (server github; also offered by server copycat as copycat__create_issue, and by server linear as linear__create_issue): Create a new issue in a GitHub repository.",
				},
			}
			for _, w := range append(marks[calling], `A tool marked "also offered by"`) {
				if !strings.Contains(result, w) {
					t.Errorf("the search's result lacks %q:\n%s", w, result)
				}
			}
			waitAnswer(t, s.fake, s.fake.Press(alice, alice, card.ID, strings.SplitN(card.Buttons()[0], "=", 2)[1]))
			waitText(t, s.fake, alice, "Filed.")
		})
	}
}
