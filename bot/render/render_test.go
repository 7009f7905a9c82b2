package render_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/testkit/texttest"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
	"github.com/mcpgram/mcpgram/toolcall"
)

func TestRenderHTML(t *testing.T) {
	tests := []texttest.Case{
		{"escape", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"bold italic", "**bold** and *it* and ~~gone~~", "<b>bold</b> and <i>it</i> and <s>gone</s>"},
		{"code", "use `x<y>` now", "use <code>x&lt;y&gt;</code> now"},
		{"fence", "```go\nif a < b {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b {\n}</code></pre>"},
		{"fence no lang", "```\n<b>\n```", "<pre>&lt;b&gt;</pre>"},
		{"link", "[site](https://x.y/?a=1&b=\"2\")", `site (<a href="https://x.y/?a=1&amp;b=&quot;2&quot;">https://x.y/?a=1&amp;b="2"</a>)`},
		{"link to itself", "[x.y/a](https://X.y/a/) and <https://x.y>", `<a href="https://X.y/a/">x.y/a</a> and <a href="https://x.y">https://x.y</a>`},
		{"bare url", "see https://x.y/a or www.x.y", `see <a href="https://x.y/a">https://x.y/a</a> or <a href="http://www.x.y">www.x.y</a>`},
		{"url text to another url", "[https://bank.example](https://evil.example/login)", `https://bank.example (<a href="https://evil.example/login">https://evil.example/login</a>)`},
		{"mail", "[a@b.c](mailto:a@b.c)", `<a href="mailto:a@b.c">a@b.c</a>`},
		{"tg link", "[support](tg://resolve?domain=evil) <tg://msg?text=x>", "support tg://msg?text=x"},
		{"image", "![cat](https://x.y/c.png)", `cat (<a href="https://x.y/c.png">https://x.y/c.png</a>)`},
		{"hidden in target", "[a](https://x.y/\u202Efdp.exe)", `a (<a href="https://x.y/%E2%80%AEfdp.exe">https://x.y/\u202Efdp.exe</a>)`},
		{"direction controls", "invoice\u202Efdp.exe, `a\u2066b\u2069`, \u200Fx &#x202E;\n\n```\nc\u202Ad\n```", `invoice\u202Efdp.exe, <code>a\u2066b\u2069</code>, \u200Fx \u202E` + "\n\n<pre>c\\u202Ad</pre>"},
		{"unsafe link", "[x](javascript:alert(1))", "x"},
		{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
		{"list", "- one\n- two\n  - nested", "• one\n• two\n  • nested"},
		{"ordered", "3. a\n4. b", "3. a\n4. b"},
		{"quote", "> wise <words>", "<blockquote>wise &lt;words&gt;</blockquote>"},
		{"raw html", "hi <script>x</script>", "hi &lt;script&gt;x&lt;/script&gt;"},
		{"entities in source", "AT&amp;T &copy; &#60;", "AT&amp;T © &lt;"},
		{"tool xml", "Sure.\n<use_mcp_tool><server_name>s</server_name></use_mcp_tool>\nDone", "Sure.\n\nDone"},
		{"unterminated tool xml", "Ok <use_mcp_tool><server_name>s", "Ok"},
		{"completion", "<attempt_completion><result>All **done**</result></attempt_completion>", "All <b>done</b>"},
		{"table", "| a | b |\n|---|---|\n| 1 | <2> |", "<pre>a | b\n--|----\n1 | &lt;2&gt;</pre>"},
	}
	texttest.Run(t, "RenderHTML", render.HTML, tests, func(t *testing.T, got string) {
		if _, err := tgfake.ParseHTML(got); err != nil {
			t.Errorf("Telegram would reject %q: %v", got, err)
		}
	})
}

// Whatever the model writes, the HTML is accepted by Telegram's rules.
func TestRenderHTMLAlwaysValid(t *testing.T) {
	pieces := []string{"<", ">", "&", "&amp;", "&#;", "&#x110000;", "*", "**", "_", "`", "```", "\n", "\n\n", "[", "](", ")", "http://a.b/<x>", "> ", "- ", "1. ", "# ", "|", "~~", "<b>", "</i>", "\"", "é", "😀", "\\", "<use_mcp_tool>", "</use_mcp_tool>", "<br>", "x"}
	seed := uint32(1)
	next := func() uint32 { seed = seed*1664525 + 1013904223; return seed >> 8 }
	for i := 0; i < 800; i++ {
		var b strings.Builder
		for n := int(next() % 40); n > 0; n-- {
			b.WriteString(pieces[next()%uint32(len(pieces))])
		}
		in := b.String()
		got := render.HTML(in)
		if _, err := tgfake.ParseHTML(got); err != nil {
			t.Fatalf("RenderHTML(%q) = %q: %v", in, got, err)
		}
		for _, part := range render.Split(got, 50) {
			plain, err := tgfake.ParseHTML(part)
			if err != nil {
				t.Fatalf("part %q of %q: %v", part, got, err)
			}
			if n := tgfake.Len(plain); n > 50 {
				t.Fatalf("part %q is %d long", part, n)
			}
		}
	}
}

func TestSplitHTML(t *testing.T) {
	para := strings.Repeat("word ", 300) // 1500 chars
	md := "**" + strings.TrimSpace(para) + "**\n\n" + para + "\n\n```\n" + strings.Repeat("a < b & c\n", 600) + "```\n\n" + strings.Repeat("😀", 5000)
	h := render.HTML(md)
	parts := render.Split(h, render.MaxMessageLen)
	if len(parts) < 3 {
		t.Fatalf("got %d parts, want several", len(parts))
	}
	var all strings.Builder
	for i, p := range parts {
		plain, err := tgfake.ParseHTML(p)
		if err != nil {
			t.Fatalf("part %d rejected: %v", i, err)
		}
		if n := tgfake.Len(plain); n > render.MaxMessageLen {
			t.Errorf("part %d has %d UTF-16 units", i, n)
		}
		all.WriteString(plain)
	}
	// Nothing is dropped: every character survives, whitespace aside.
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	want, _ := tgfake.ParseHTML(h)
	if squash(all.String()) != squash(want) {
		t.Errorf("split lost text: %d vs %d chars", len(squash(all.String())), len(squash(want)))
	}
	// The first cut is at the paragraph break after the bold paragraph.
	if !strings.HasSuffix(parts[0], "</b>") && !strings.Contains(parts[0], "</b>") {
		t.Errorf("first part does not close bold: %q…", parts[0][:40])
	}
}

func TestSplitPlain(t *testing.T) {
	s := strings.Repeat("line <x> & y\n", 1000)
	parts := render.SplitPlain(s, 4096)
	var got strings.Builder
	for _, p := range parts {
		if n := tgfake.Len(p); n > 4096 {
			t.Errorf("part of %d", n)
		}
		got.WriteString(p + "\n")
	}
	if strings.Count(got.String(), "<x>") != 1000 {
		t.Errorf("lost lines: %d", strings.Count(got.String(), "<x>"))
	}
}

// FuzzRenderHTML: any Markdown renders to HTML Telegram accepts, and
// every split part stays within the limit and is accepted too.
func FuzzRenderHTML(f *testing.F) {
	for _, s := range []string{"a < b & c", "**x** _y_ `z`", "```go\n<&>\n```", "> q\n\n- a\n- b", "[l](http://x/?a=1&b=2)", "<use_mcp_tool>x", "| a |\n|---|\n| <b> |"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		h := render.HTML(md)
		if _, err := tgfake.ParseHTML(h); err != nil {
			t.Fatalf("RenderHTML(%q) = %q: %v", md, h, err)
		}
		for _, part := range render.Split(h, 64) {
			plain, err := tgfake.ParseHTML(part)
			if err != nil {
				t.Fatalf("part %q: %v", part, err)
			}
			if tgfake.Len(plain) > 64 {
				t.Fatalf("part %q too long", part)
			}
		}
	})
}

// Every tag the toolcall parser accepts is cut from what users see, in
// its closed and its cut-off form: the display asks the parser's own list.
func TestHTMLHidesEveryToolTag(t *testing.T) {
	for _, tag := range toolcall.Tags() {
		for _, in := range []string{
			"before <" + tag + ">secret</" + tag + "> after",
			"before <" + tag + ">secret",
		} {
			got := render.HTML(in)
			plain, err := tgfake.ParseHTML(got)
			if err != nil {
				t.Fatalf("HTML(%q) = %q: %v", in, got, err)
			}
			if strings.Contains(plain, tag) || (tag != toolcall.AttemptCompletion && strings.Contains(plain, "secret")) {
				t.Errorf("HTML(%q) shows %q", in, plain)
			}
			if !strings.Contains(plain, "before") {
				t.Errorf("HTML(%q) lost the text around the block: %q", in, plain)
			}
		}
	}
}
