package bot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// streamed is a reply of n bytes as a model writes it: paragraphs, with a
// code block now and then.
func streamed(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%7 == 3 {
			fmt.Fprintf(&b, "```go\nfunc f%d() { return a < b }\n```\n\n", i)
			continue
		}
		fmt.Fprintf(&b, "Paragraph %d says **something** & <more>.\n\n", i)
	}
	return b.String()[:n]
}

// The draft of a streamed reply shows its tail, one message's worth, and
// an edit costs what changed, not the whole text: as many allocations at
// 1 MiB of text as at 16 KiB.
func TestDraftShowsTheTail(t *testing.T) {
	text := streamed(1 << 20)
	var d render.Draft
	for n := 1 << 10; n <= len(text); n += 64 << 10 {
		d.HTML(text[:n])
	}
	got := d.HTML(text)
	plain, err := tgfake.ParseHTML(got)
	if err != nil {
		t.Fatalf("Telegram would refuse the draft: %v", err)
	}
	if n := len([]rune(plain)); n > render.MaxMessageLen {
		t.Errorf("the draft is %d characters, over a message", n)
	}
	tail := text[len(text)-200:]
	last := tail[strings.LastIndex(tail, "Paragraph"):]
	if !strings.Contains(plain, strings.TrimSpace(strings.NewReplacer("**", "").Replace(last))) {
		t.Errorf("the draft %q does not end with the text's end %q", got[max(0, len(got)-300):], last)
	}
	if !strings.HasPrefix(got, "…") {
		t.Errorf("the draft %q does not say it is the tail", got[:min(80, len(got))])
	}

	allocs := func(n int) float64 {
		var d render.Draft
		d.HTML(text[:n-4096])
		grow := n - 2048
		return testing.AllocsPerRun(20, func() {
			d.HTML(text[:grow])
			grow += 16
		})
	}
	small, large := allocs(16<<10), allocs(1<<20)
	t.Logf("allocations per edit: %.0f at 16 KiB of text, %.0f at 1 MiB", small, large)
	if large > 2*small+50 {
		t.Errorf("an edit at 1 MiB of text allocates %.0f times, at 16 KiB %.0f: the work grows with the text", large, small)
	}
}

// Inside an open code block, the tail is shown as code.
func TestDraftReopensCodeBlock(t *testing.T) {
	var d render.Draft
	text := "Here it is:\n\n```python\n" + strings.Repeat("print('a < b')\n", 1000)
	d.HTML(text[:len(text)/2])
	got := d.HTML(text)
	if !strings.Contains(got, "<pre>") && !strings.Contains(got, "<code") {
		t.Errorf("the tail of an open code block is not shown as code: %q", got[:min(200, len(got))])
	}
	// A text that is not the last one grown (a new model call) starts over.
	got = d.HTML("Plain **words** now.")
	if strings.Contains(got, "<pre>") || !strings.Contains(got, "<b>words</b>") {
		t.Errorf("a new text is drafted as %q", got)
	}
}
