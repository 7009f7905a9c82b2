package toolcall_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/texttest"
	"github.com/mcpgram/mcpgram/toolcall"
)

// Every tag the parser takes hides what it opens, closed or left open at
// the end, from what users see; a completion shows what it wraps, the
// answer, without its tags.
func TestVisibleHidesEveryTag(t *testing.T) {
	for _, tag := range toolcall.Tags() {
		for _, in := range []string{
			"a <" + tag + ">inside</" + tag + "> b",
			"a <" + tag + ">inside",
			"a &lt;" + tag + "&gt;inside&lt;/" + tag + "&gt; b",
			"a &lt;" + tag + "&gt;inside",
		} {
			got := toolcall.Visible(in)
			shown := tag == toolcall.AttemptCompletion
			if strings.Contains(got, "inside") != shown || strings.Contains(got, "<"+tag+">") || strings.Contains(got, "&lt;"+tag+"&gt;") || !strings.HasPrefix(got, "a") {
				t.Errorf("Visible(%q) = %q", in, got)
			}
		}
	}
}

func TestVisible(t *testing.T) {
	tests := []texttest.Case{
		{"plain", "  Hello <b>world</b>\n", "Hello <b>world</b>"},
		{"call removed", "Checking.\n" + tool("everything", "echo", `{"message":"hi"}`) + "\nDone.", "Checking.\n\nDone."},
		{"completion shows its result", "Here:\n<attempt_completion>\n<result>\nThe answer is 42.\n</result>\n</attempt_completion>", "Here:\n\n\nThe answer is 42."},
		{"completion between text", "x <attempt_completion><result>R</result></attempt_completion> y", "x R y"},
		{"completion cut off", "<attempt_completion><result>Partial answ", "Partial answ"},
		{"completion without result", "<attempt_completion></attempt_completion>", ""},
		{"completion keeps other markup", "<attempt_completion><note>n</note><result>Use <b>bold</b></result></attempt_completion>", "<note>n</note>Use <b>bold</b>"},
		{"bare result tags", "<result>Done.</result>", "Done."},
		{"stray completion end", "Done.</attempt_completion>", "Done."},
		{"question hidden", "Which one?\n<ask_followup_question><question>Which?</question></ask_followup_question>", "Which one?"},
		{"thinking hidden", "<thinking>plan</thinking>Hi <think>hmm</think>there.", "Hi there."},
		{"stray end of thinking", "reasoning\n</think>\nAnswer", "Answer"},
		{"mcp:tool hidden", "Sure. <mcp:tool>name: echo</mcp:tool>", "Sure."},
		{"tool_call hidden", "Let me look. <tool_call>{\"name\": \"echo\"}</tool_call>", "Let me look."},
		{"function_calls hidden", "One moment.\n<function_calls>\n<invoke name=\"echo\"></invoke>\n</function_calls>", "One moment."},
		{"tags inside a result are hidden too", "<attempt_completion><result>A <think>x</think>B</result></attempt_completion>", "A B"},
		{"a tag joined around a removed block is dropped", "<thi<think>x</think>nking>shown", "shown"},
		{"joined tags nest", "</resu</resu<think></think>lt>lt>A", "A"},
		{"partial tag at the end is text", "a <use_mcp", "a <use_mcp"},
		{"other tags are text", "<b>x</b> <tool>y</tool>", "<b>x</b> <tool>y</tool>"},
		{"escaped call hidden", "Sure.\n&lt;use_mcp_tool&gt;&lt;server_name&gt;s&lt;/server_name&gt;&lt;/use_mcp_tool&gt;", "Sure."},
		{"escaped completion shows its result", "&lt;attempt_completion&gt;&lt;result&gt;42&lt;/result&gt;&lt;/attempt_completion&gt;", "42"},
		{"escaped tags joined around a removed block are dropped", "&lt;thi<think>x</think>nking&gt;shown", "shown"},
		{"other escaped markup is text", "a &lt; b &amp;&amp; &lt;b&gt;c&lt;/b&gt;", "a &lt; b &amp;&amp; &lt;b&gt;c&lt;/b&gt;"},
		{"a JSON call is the parser's to take", "{\"tool\": \"echo\", \"params\": {\"message\": \"hi\"}}", "{\"tool\": \"echo\", \"params\": {\"message\": \"hi\"}}"},
		{"a completion's result in JSON is the answer", "<attempt_completion><result>{\"tool\": \"echo\"}</result></attempt_completion>", "{\"tool\": \"echo\"}"},
		{"Hermes and Qwen calls hidden", "A <tool_call>{\"name\": \"echo\"}</tool_call><tool_call><function=echo></function></tool_call>", "A"},
		{"other JSON is text", "{\"name\": \"Ada\"} is a person.", "{\"name\": \"Ada\"} is a person."},
	}
	texttest.Run(t, "Visible", toolcall.Visible, tests)
}

// FuzzVisible checks what users may see of any reply:
//   - it holds no opening tag of Tags(), no closing tag of thinking and no
//     tag of a completion, whatever the input (a tag joined from the text
//     around a removed block included);
//   - it is stable: the bot may apply Visible to text that already went
//     through it, or through the parser, and must not change it again;
//   - text with no '<' or '&' (no tag, escaped or not) is shown as
//     written, only trimmed;
//   - without completions it agrees with the parser's visible text, which
//     streaming showed, but for a JSON call, the parser's to take.
func FuzzVisible(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in)
	}
	for _, tag := range toolcall.Tags() {
		f.Add("a <" + tag + ">x</" + tag + "> b")
		f.Add("<" + tag[:2] + "<think></think>" + tag[2:] + ">")
	}
	f.Add("<attempt_completion><result><thi</result></attempt_completion>nking>")
	f.Add("<res<think></think>ult>x")
	f.Add("&lt;res<think></think>ult&gt;x&lt;use_mcp_tool&gt;")
	f.Add("{\"tool\": \"a\"}")
	f.Fuzz(func(t *testing.T, in string) {
		got := toolcall.Visible(in)
		for _, tag := range toolcall.Tags() {
			if strings.Contains(got, "<"+tag+">") || strings.Contains(got, "&lt;"+tag+"&gt;") {
				t.Fatalf("Visible(%q) = %q holds <%s>", in, got, tag)
			}
		}
		for _, end := range []string{"</think>", "</thinking>", "<result>", "</result>", "</attempt_completion>", "&lt;/think&gt;", "&lt;result&gt;", "&lt;/attempt_completion&gt;"} {
			if strings.Contains(got, end) {
				t.Fatalf("Visible(%q) = %q holds %s", in, got, end)
			}
		}
		if again := toolcall.Visible(got); again != got {
			t.Fatalf("Visible is not stable: %q -> %q -> %q", in, got, again)
		}
		if !strings.ContainsAny(in, "<&") && got != strings.TrimSpace(in) {
			t.Fatalf("Visible(%q) = %q, want the text trimmed", in, got)
		}
		if !strings.Contains(in, "result>") && !strings.Contains(in, "attempt_completion>") && !strings.Contains(in, "think") {
			r := toolcall.Parse(in)
			want := strings.TrimSpace(r.Text)
			if n := len(r.Blocks); n > 0 && r.Blocks[n-1].Closing() == "}" {
				want = strings.TrimSpace(in) // a JSON call, which Visible leaves as text
			}
			if got != want {
				t.Fatalf("Visible(%q) = %q, parser shows %q", in, got, want)
			}
		}
	})
}
