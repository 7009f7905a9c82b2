package toolcall_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/toolcall"
)

// reply64K is a 64 KiB model reply: prose with markup, thinking, and tool
// blocks whose JSON holds tags and '<'.
func reply64K() string {
	var b strings.Builder
	b.WriteString("<thinking>The user wants several things; I will call the tools.</thinking>\n")
	for i := 0; b.Len() < 64<<10; i++ {
		b.WriteString("Here is some text with <b>markup</b>, a comparison a < b, and `code`.\n")
		if i%8 == 0 {
			b.WriteString(tool("everything", "echo", `{"message": "<p>hello</p> </arguments-not> and more text to make it longer"}`))
			b.WriteString("\n")
		}
	}
	return b.String()[:64<<10]
}

func BenchmarkParse(b *testing.B) {
	in := reply64K()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		toolcall.Parse(in)
	}
}

// BenchmarkParseStream feeds the same reply in 16-byte chunks, as tokens
// arrive, reading the visible text after each.
func BenchmarkParseStream(b *testing.B) {
	in := reply64K()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		p := toolcall.NewParser()
		for i := 0; i < len(in); i += 16 {
			p.Write(in[i:min(i+16, len(in))])
		}
		p.Close()
	}
}

// BenchmarkParseHostile parses inputs built to make a careless parser
// quadratic, at 16 KiB and 256 KiB, whole and in 7-byte chunks. The
// throughput of the two sizes should be about the same; a quadratic case
// shows as MB/s falling sixteenfold. (A timing check belongs here, not in
// a test that would flake on a busy machine.)
func BenchmarkParseHostile(b *testing.B) {
	inputs := []struct {
		name string
		gen  func(n int) string
	}{
		{"many <", func(n int) string { return strings.Repeat("<", n) }},
		{"many partial tags", func(n int) string { return strings.Repeat("<use_mcp_too", n/12) }},
		{"open param forever", func(n int) string { return "<use_mcp_tool><arguments>" + strings.Repeat("</argument", n/10) }},
		{"open tool forever", func(n int) string { return "<use_mcp_tool>" + strings.Repeat("<server_nam", n/11) }},
		{"thinking forever", func(n int) string { return "<think>" + strings.Repeat("</thin", n/6) }},
		{"spaces", func(n int) string { return "a" + strings.Repeat(" \n", n/2) }},
		{"many blocks", func(n int) string {
			return strings.Repeat("<attempt_completion><result>x</result></attempt_completion>", n/60)
		}},
		{"backticks", func(n int) string { return "x\n" + strings.Repeat("`", n) }},
		{"fence lines", func(n int) string { return strings.Repeat("```\n", n/4) }},
		{"fenced block then", func(n int) string {
			return "```\n<attempt_completion><result>x</result></attempt_completion>\n" + strings.Repeat("` ", n/2)
		}},
		{"dialect lines", func(n int) string {
			return "<mcp:tool>name: x\nparameters:\n" + strings.Repeat("k: v\n", n/5) + "</mcp:tool>"
		}},
		{"many &", func(n int) string { return strings.Repeat("&", n) }},
		{"many partial escaped tags", func(n int) string { return strings.Repeat("&lt;use_mcp_too", n/15) }},
		{"space before a fence's JSON", func(n int) string { return "```json\n" + strings.Repeat(" \n", n/2) + "{}" }},
		{"a held JSON object", func(n int) string { return `{"tool": "x", "params": {` + strings.Repeat(`"k": 1, `, n/8) + `"z": 2}}` }},
		{"function parameters", func(n int) string {
			return "<tool_call><function=f>" + strings.Repeat("<parameter=k>v</parameter>", n/26) + "</function></tool_call>"
		}},
	}
	for _, in := range inputs {
		for _, size := range []int{1 << 14, 1 << 18} {
			text := in.gen(size)
			b.Run(fmt.Sprintf("%s/%dKiB", in.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					toolcall.Parse(text)
					p := toolcall.NewParser()
					for i := 0; i < len(text); i += 7 {
						p.Write(text[i:min(i+7, len(text))])
					}
					p.Close()
				}
			})
		}
	}
}

// BenchmarkVisibleNested: tags joined around a removed thinking block,
// nested so that each one cut joins the next ("</resu</resu<think></think>
// lt>lt>"), at 16 and 64 KiB. Throughput should not fall with the size:
// Visible cuts them in one pass.
func BenchmarkVisibleNested(b *testing.B) {
	for _, size := range []int{1 << 14, 1 << 16} {
		n := size / 9
		in := strings.Repeat("</resu", n) + "<think></think>" + strings.Repeat("lt>", n)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if toolcall.Visible(in) != "" {
					b.Fatal("a joined tag was left")
				}
			}
		})
	}
}
