package render_test

import (
	"html"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/testkit/texttest"
)

// A viewer of the file: GitHub-flavoured Markdown, bare addresses made
// links as GitHub does.
var viewer = goldmark.New(goldmark.WithExtensions(extension.GFM))

// bidiControls are the characters that turn text around or reorder it.
const bidiControls = "\u061C\u200E\u200F\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069"

// TestDocument: the file holds the chat's text as Markdown: formatting
// kept, everything else that Markdown would read as markup escaped.
func TestDocument(t *testing.T) {
	tests := []texttest.Case{
		{"formatting", "# Title\n\n**bold**, *it*, ~~gone~~ and `x<y>`", "**Title**\n\n**bold**, *it*, ~~gone~~ and `x<y>`"},
		{"escaped", "2 * 3 = 6, a_b, [not a link], <tag> & AT&amp;T | x ~ y", `2 \* 3 = 6, a\_b, \[not a link\], \<tag\> \& AT\&T \| x \~ y`},
		{"line starts", "\\# not a heading\n\\- not an item\n\\+ nor this", "\\# not a heading  \n\\- not an item  \n\\+ nor this"},
		{"lists", "- one\n- two\n  - nested\n\n3. a\n4. b", "• one  \n• two  \n\u00A0\u00A0• nested\n\n3\\. a  \n4\\. b"},
		{"code in a list", "- a\n- ```\n  <iframe src=x>\n  ```\n- b", "• a  \n• \n```\n<iframe src=x>\n```  \n• b"},
		{"code under a number", "1. a\n\n   ```\n   <iframe>\n   ```\n2. b", "1\\. a  \n\u00A0\u00A0\n```\n<iframe>\n```  \n2\\. b"},
		{"a number that is no item", "In 2024. Or 3) and 10.5", "In 2024. Or 3) and 10.5"},
		{"quote", "> wise\n> words\n\nafter", "> wise  \n> words\n\nafter"},
		{"fence", "```go\nif a < b {\n}\n```", "```go\nif a < b {\n}\n```"},
		{"fence holding a fence", "````\n```\n````", "````\n```\n````"},
		{"code holding backticks", "`` a`b ``", "``a`b``"},
		{"code over two lines", "`a\nb <x>`", "`a b <x>`"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "```\na | b\n--|--\n1 | 2\n```"},
		{"link to itself", "see https://x.y/a", "see <https://x.y/a>"},
		{"mail", "[a@b.c](mailto:a@b.c)", "<mailto:a@b.c>"},
	}
	document := func(md string) string { return render.Document(render.HTML(md)) }
	texttest.Run(t, "Document", document, tests, func(t *testing.T, got string) {
		if problem := readAsViewer(got); problem != "" {
			t.Errorf("a viewer of %q finds %s", got, problem)
		}
	})
}

// TestDocumentHostile: what the chat leaves out or shows is left out or
// shown in the file's bytes too: hidden link targets, links that act in
// Telegram or run code, remote images, raw HTML, direction controls.
func TestDocumentHostile(t *testing.T) {
	tests := []struct {
		name, md string
		want     []string // in the file
		absent   []string // nowhere in the file
	}{
		{"hidden target", "Sign in at [https://bank.example](https://evil.example/login).",
			[]string{"https://bank.example (<https://evil.example/login>)"}, []string{"]("}},
		{"word over a target", "[Google](https://evil.example/g)", []string{"Google (<https://evil.example/g>)"}, []string{"]("}},
		{"tg link", "[support](tg://resolve?domain=evil) and [join](tg://join?invite=x)", []string{"support and join"}, []string{"tg:", "]("}},
		{"javascript", "[click](javascript:alert(1)) [x](JavaScript:alert(2))", []string{"click x"}, []string{"javascript:", "JavaScript:"}},
		{"other schemes", "[f](file:///etc/passwd) [d](data:text/html,<b>x</b>)", []string{"f d"}, []string{"file:", "data:"}},
		{"reference link", "[support][r]\n\n[r]: tg://resolve?domain=evil", []string{"support"}, []string{"tg:", "[r]"}},
		{"remote image", "![pixel](https://evil.example/p.png)", []string{"pixel (<https://evil.example/p.png>)"}, []string{"!["}},
		{"image without alt", "![](https://evil.example/p.png)", []string{"image (<https://evil.example/p.png>)"}, []string{"!["}},
		{"raw html image", `<img src="https://evil.example/p.png"> <iframe src="https://evil.example">`,
			[]string{`\<img src="https://evil.example/p.png"\> \<iframe src="https://evil.example"\>`}, nil},
		{"html block", "<div>\n<img src=x>\n</div>", []string{`\<div\>`, `\<img src=x\>`}, nil},
		{"override", "Open invoice\u202Efdp.exe now, \u2066isolated\u2069, \u200Fmark", []string{`invoice\\u202Efdp.exe`, `\\u2066isolated\\u2069`, `\\u200Fmark`}, nil},
		{"override in code", "`invoice\u202Efdp.exe`\n\n```\nx\u202Ey\n```", []string{"`invoice\\u202Efdp.exe`", `x\u202Ey`}, nil},
		{"override as an entity", "invoice&#x202E;fdp.exe", []string{`invoice\\u202Efdp.exe`}, []string{"&#x202E;"}},
		{"override in a target", "[a](https://x.y/\u202Efdp.exe)", []string{"a (<https://x.y/%E2%80%AEfdp.exe>)"}, nil},
		{"entity in a target", "[a](https://x.y/&#x202E;b?c=1&d=2)", []string{"a (<https://x.y/%26#x202E;b?c=1&d=2>)"}, []string{"/&#x"}},
		{"space in a target", "[a](<https://x.y/a b>)", []string{"a (<https://x.y/a%20b>)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := render.Document(render.HTML(tt.md))
			for _, w := range tt.want {
				if !strings.Contains(doc, w) {
					t.Errorf("the file %q lacks %q", doc, w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(doc, a) {
					t.Errorf("the file %q holds %q", doc, a)
				}
			}
			if strings.ContainsAny(doc, bidiControls) {
				t.Errorf("the file %q holds a direction control", doc)
			}
			if problem := readAsViewer(doc); problem != "" {
				t.Errorf("a viewer of %q finds %s", doc, problem)
			}
		})
	}
}

// readAsViewer reads doc as a Markdown viewer would and says what it
// finds that the chat would not show: an image, raw HTML, a link whose
// text is not its target or to another scheme than http, https, mailto
// (or ftp, which viewers make of bare text), a direction control in a
// target; "" when none.
func readAsViewer(doc string) string {
	src := []byte(doc)
	var problem string
	_ = ast.Walk(viewer.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			problem = "an image of " + string(n.Destination)
		case *ast.RawHTML, *ast.HTMLBlock:
			problem = "raw HTML"
		case *ast.Link:
			problem = "a link to " + string(n.Destination) + " under other text"
		case *ast.AutoLink:
			url := html.UnescapeString(string(n.URL(src)))
			scheme, _, _ := strings.Cut(strings.ToLower(url), ":")
			switch {
			case strings.ContainsAny(url, bidiControls):
				problem = "a direction control in the link " + url
			case n.AutoLinkType == ast.AutoLinkURL && !strings.HasPrefix(strings.ToLower(url), "www.") && scheme != "http" && scheme != "https" && scheme != "mailto" && scheme != "ftp":
				problem = "a link to " + url
			}
		}
		if problem != "" {
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return problem
}

// Whatever the model writes, the file holds no image, no raw HTML, no
// link whose target it does not show or that is not a web or mail
// address, and no direction control.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{
		"[a](https://evil.example) ![p](https://e/p.png) [t](tg://x) <img src=x> invoice\u202Efdp.exe",
		"`a\n<iframe src=x>`", "````\n```\n````", "- ```\n  <iframe src=x>\n  ```", "1. a\n   1. b\n\n      ```\n      <iframe>\n      ```", "> q\n> ```\n> x\n> ```", "- a\n  - b\n\n1. c",
		"[x][r]\n\n[r]: javascript:alert(1)", "&#x202E; &amp; &lt;b&gt;", "**a *b* ~~c~~** | d", "a\rb\r# c",
		"<https://x.y/&#x202E;> <mailto:a@b.c>", "<http://&#X200E>", "# h\n\n---\n\n| a |\n|---|\n| ![i](https://e/i.png) |",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		doc := render.Document(render.HTML(md))
		if strings.ContainsAny(doc, bidiControls) {
			t.Fatalf("Document(%q) = %q holds a direction control", md, doc)
		}
		if problem := readAsViewer(doc); problem != "" {
			t.Fatalf("Document(%q) = %q: a viewer finds %s", md, doc, problem)
		}
	})
}
