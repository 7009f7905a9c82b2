package render_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// FuzzApprovalCard: whatever the server, tool, resource, arguments and
// a lookalike's server, the card is HTML Telegram accepts in every part,
// shows the tool and the servers, shows nothing hidden, and an
// attachment holds the same JSON.
func FuzzApprovalCard(f *testing.F) {
	f.Add("files", "write_file", "", `{"path": "invoice\u202Efdp.exe", "content": "x"}`, false, "")
	f.Add("memory", "memory", "", `{"operation": "store", "content": "<b>&amp;"}`, true, "")
	f.Add("files", "", "file:///tmp/\u2066x", "", false, "")
	f.Add("s\u200B", "t\n<i>", "", `{"a\n• path": [1, {"b": null}], "c": "`+strings.Repeat("é", 5000)+`"}`, false, "")
	f.Add("s", "t", "", `not json \u202E`, false, "")
	f.Add("memory", "memory", "", `{"operation": "store", "content": "a\n</blockquote>\u202E\n`+strings.Repeat("line\n", 40)+`", "tags": ["x\ny"]}`, true, "")
	f.Add("clock", "now", "", `{}`, false, "")
	f.Add("github", "create_issue", "", `{"title": "x"}`, false, "copy\u202Ecat")
	f.Fuzz(func(t *testing.T, server, tool, uri, args string, consent bool, alike string) {
		c := render.ApprovalCard{Server: server, Tool: tool, URI: uri, Arguments: args, Consent: consent,
			Footer: "<i>Expires in 5 min if nobody answers.</i>", File: "arguments.json"}
		if alike != "" && tool != "" {
			c.Lookalikes = []toolsearch.Lookalike{{Server: alike, Tool: tool}}
		}
		html, attach := c.HTML()
		var plain strings.Builder
		for _, part := range render.Split(html, render.MaxMessageLen) {
			p, err := tgfake.ParseHTML(part)
			if err != nil {
				t.Fatalf("Telegram would reject a part of the card: %v\n%q", err, part)
			}
			if n := tgfake.Len(p); n > render.MaxMessageLen {
				t.Fatalf("a part of the card is %d long", n)
			}
			plain.WriteString(p)
		}
		shown := plain.String()
		for _, r := range shown {
			if dangerous(r) {
				t.Fatalf("the card shows %U raw: %q", r, shown)
			}
		}
		squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
		name := tool
		if tool == "" {
			name = uri
		}
		for _, want := range []string{name, server, alike} {
			if want == alike && c.Lookalikes == nil {
				continue
			}
			if v := squash(render.Visible(want)); !strings.Contains(squash(shown), v) {
				t.Fatalf("the card does not show %q as %q:\n%s", want, v, shown)
			}
		}
		if attach == nil {
			return
		}
		if !utf8.Valid(attach) || strings.ContainsFunc(string(attach), dangerous) {
			t.Fatalf("the attachment shows something hidden raw: %q", attach)
		}
		var want, got any
		if json.Unmarshal([]byte(args), &want) == nil {
			if err := json.Unmarshal(attach, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("the attachment means %v (%v), the call %v", got, err, want)
			}
		}
	})
}

// A card reads as what it asks: a text of several lines as text, a call
// without arguments says so, what the server says of its tool as its
// claim, and a memory store as the question it is.
func TestApprovalCardReads(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name      string
		card      render.ApprovalCard
		want, not []string
	}{
		{"multi-line text", render.ApprovalCard{Server: "files", Tool: "write_file", Arguments: `{"path": "/tmp/a.md", "content": "# Title\n\nline two\n• path: \"/etc/passwd\""}`},
			[]string{"• path: \"/tmp/a.md\"", "• content:\n# Title\n\nline two\n• path: \"/etc/passwd\""}, []string{`\n`}},
		{"many lines are cut", render.ApprovalCard{Server: "files", Tool: "write_file", Arguments: `{"content": "` + strings.Repeat(`l\n`, 30) + `"}`},
			[]string{"• content:\nl\nl\n", "(+45 more characters)", "In full:\ncontent:\n│ l\n│ l"}, nil},
		{"no arguments", render.ApprovalCard{Server: "clock", Tool: "now", Arguments: `{}`},
			[]string{"Run now on clock with no arguments."}, []string{"•", "(value)"}},
		{"empty arguments", render.ApprovalCard{Server: "clock", Tool: "now", Arguments: ``},
			[]string{"Run now on clock with no arguments."}, []string{"•"}},
		{"hints", render.ApprovalCard{Server: "calc", Tool: "add", Arguments: `{"a": 1}`, Hints: mcpgram.Hints{ReadOnly: &yes, Destructive: &yes, OpenWorld: &no}},
			[]string{"Its server says this tool changes nothing; keeps to its own data (the server's claim, not checked)."}, []string{"delete"}},
		{"destructive", render.ApprovalCard{Server: "files", Tool: "rm", Arguments: `{"a": 1}`, Hints: mcpgram.Hints{ReadOnly: &no, Destructive: &yes, Idempotent: &yes, OpenWorld: &yes}},
			[]string{"says this tool may delete or overwrite; calling it again changes nothing more; reaches the outside world"}, nil},
		{"no hints", render.ApprovalCard{Server: "files", Tool: "rm", Arguments: `{"a": 1}`}, nil, []string{"server's claim"}},
		{"remember", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "store", "content": "Anna is my wife\nand\u202Ebad", "tags": ["family"]}`},
			[]string{"🧠 Remember this?\nAnna is my wife\nand\\u202Ebad\n• tags[0]: \"family\"\nAsked by memory on memory, which stores it only if you agree."}, []string{"operation", "consent is needed"}},
		{"other consent", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "delete", "key": "k"}`},
			[]string{"Your consent is needed", "• operation: \"delete\""}, []string{"Remember"}},
		{"lookalikes", render.ApprovalCard{Server: "github", Tool: "create_issue", Arguments: `{"title": "t"}`,
			Lookalikes: []toolsearch.Lookalike{{Server: "copycat", Tool: "create_issue"}, {Server: "evil", Tool: "make_issue"}, {Server: "linear", Tool: "create_issue"}, {Server: "zz", Tool: "create_issue"}}},
			[]string{"🔐 Approval needed\n⚠️ Check the server: this call goes to github. A tool like it is also offered by copycat, evil (as make_issue), linear, 1 other server.\nRun create_issue on github with:"}, []string{"zz"}},
		{"no lookalikes", render.ApprovalCard{Server: "github", Tool: "create_issue", Arguments: `{"title": "t"}`}, nil, []string{"Check the server"}},
		{"remember with lookalikes", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "store", "content": "x"}`, Lookalikes: []toolsearch.Lookalike{{Server: "notes", Tool: "memory"}}},
			[]string{"🧠 Remember this?\n⚠️ Check the server: this call goes to memory. A tool like it is also offered by notes.\nx"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html, _ := tt.card.HTML()
			plain, err := tgfake.ParseHTML(html)
			if err != nil {
				t.Fatalf("Telegram would reject the card: %v\n%s", err, html)
			}
			for _, w := range tt.want {
				if !strings.Contains(plain, w) {
					t.Errorf("card lacks %q:\n%s", w, plain)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(plain, w) {
					t.Errorf("card has %q:\n%s", w, plain)
				}
			}
		})
	}
	// A line of a multi-line value is inside its quote, so it cannot pass
	// for an argument of its own.
	html, _ := render.ApprovalCard{Server: "f", Tool: "w", Arguments: `{"content": "a\n• path: \"/etc/passwd\""}`}.HTML()
	if !strings.Contains(html, "<blockquote>a\n• path: \"/etc/passwd\"</blockquote>") {
		t.Errorf("the text is not quoted as one value:\n%s", html)
	}
}

// A tool's title goes beside its name on an approval card, never in its
// place: a server chooses it.
func TestApprovalCardShowsTheTitleBesideTheName(t *testing.T) {
	html, _ := render.ApprovalCard{Server: "f", Tool: "delete_all", ToolTitle: "Read <safely>", Arguments: `{}`}.HTML()
	if !strings.Contains(html, "Run <code>delete_all</code> (Read &lt;safely&gt;) on <b>f</b>") {
		t.Errorf("card %q", html)
	}
}

// A card in the terminal has the words of the card in Telegram, as text:
// a quote indented, the arguments in full after a cut one, and nothing
// a server or the model wrote reaching the terminal raw.
func TestApprovalCardText(t *testing.T) {
	long := strings.Repeat("tea ", 600)
	tests := []struct {
		name string
		card render.ApprovalCard
		want []string
		not  []string
	}{
		{"memory", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "store", "content": "I like tea\nwith milk"}`},
			[]string{"🧠 Remember this?\n  I like tea\n  with milk\nAsked by memory on memory, which stores it only if you agree."}, []string{`"content"`, "<"}},
		{"approval", render.ApprovalCard{Server: "echo", Tool: "add", Arguments: `{"a": 2, "b": 3}`, Footer: "<i>Expires in 10 min if nobody answers.</i>"},
			[]string{"🔐 Approval needed\nRun add on echo with:\n• a: 2\n• b: 3\nExpires in 10 min if nobody answers."}, []string{"<"}},
		{"read", render.ApprovalCard{Server: "files", URI: "file:///notes.txt"}, []string{"🔐 Approval needed\nRead file:///notes.txt from files."}, nil},
		{"cut", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "store", "content": "` + long + `"}`},
			[]string{"more characters)", "\nIn full:\n{\n  \"content\": \"" + long}, nil},
		{"escape", render.ApprovalCard{Server: "memory", Tool: "memory", Consent: true, Arguments: `{"operation": "store", "content": "clear\u001b[2J"}`}, []string{`  clear\u001B[2J`}, []string{"\x1b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.card.Text()
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("Text() = %q, want it to hold %q", got, want)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(got, not) {
					t.Errorf("Text() = %q holds %q", got, not)
				}
			}
		})
	}
}
