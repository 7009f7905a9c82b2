package render_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/bot/render"
)

func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"invoice\u202Efdp.exe", `invoice\u202Efdp.exe`},
		{"plain text, ünïcødé, 中文, עברית", "plain text, ünïcødé, 中文, עברית"},
		{"line\nand\ttab", "line\nand\ttab"},
		{"cr\rnul\x00del\x7f", `cr\u000Dnul\u0000del\u007F`},
		{"zero\u200Bwidth\u200C\u2060\uFEFF", `zero\u200Bwidth\u200C\u2060\uFEFF`},
		{"\u2066isolate\u2069 \u200Fmark\u200E \u061C", `\u2066isolate\u2069 \u200Fmark\u200E \u061C`},
		{"soft\u00ADhyphen", `soft\u00ADhyphen`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"hangul\u3164filler\u115F", `hangul\u3164filler\u115F`},
		{"braille\u2800blank", `braille\u2800blank`},
		{"tag\U000E0041\U000E007F", `tag\uDB40\uDC41\uDB40\uDC7F`},
		{"smuggled 😀\U000E0100\uFE01", `smuggled 😀\uDB40\uDD00\uFE01`},
		{"c1\u0085", `c1\u0085`},
		{"bad \xff byte", `bad \xFF byte`},
		// Emoji keep their selectors and joiners.
		{"❤️ 👨‍👩‍👧 🏳️‍🌈 1️⃣ 👍🏽", "❤️ 👨‍👩‍👧 🏳️‍🌈 1️⃣ 👍🏽"},
		// But a selector or joiner that joins nothing shows.
		{"a\u200Db \uFE0Fx \u200D", `a\u200Db \uFE0Fx \u200D`},
	}
	for _, tt := range tests {
		if got := render.Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Inside a JSON string, Visible keeps the value: what the user reads is
// what runs.
func TestVisibleKeepsJSON(t *testing.T) {
	want := map[string]string{"path": "invoice\u202Efdp.exe", "tag": "x\U000E0041", "k\u200B": "v"}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	shown := render.Visible(string(b))
	var got map[string]string
	if err := json.Unmarshal([]byte(shown), &got); err != nil {
		t.Fatalf("%s: %v", shown, err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: got %q, want %q", k, got[k], v)
		}
	}
}

// dangerous reports whether r must never reach the user unescaped,
// whatever is around it: an independent list, not Visible's own test.
func dangerous(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r >= 0x7F && r < 0xA0, r == 0xAD, r == 0x61C, r == 0x115F, r == 0x1160, r == 0x180E,
		r >= 0x200B && r <= 0x200C, r >= 0x200E && r <= 0x200F, r >= 0x2028 && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r == 0x2800, r == 0x3164, r == 0xFEFF, r == 0xFFA0, r >= 0xFFF9 && r <= 0xFFFB,
		r >= 0xE0000 && r <= 0xE0FFF, r >= 0xFE00 && r <= 0xFE0D:
		return true
	}
	return false
}

// FuzzVisible: nothing hidden survives, the result is valid UTF-8,
// Visible of it changes nothing more, and (for text without backslashes)
// every character comes back from the escapes.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"invoice\u202Efdp.exe", "a\u200Db", "👨‍👩‍👧", "x\U000E0041", "\xff\xfe", "❤️", "\uFE0F\u200D\uFE0F", "1\uFE0F\u20E3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := render.Visible(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Visible(%q) = %q: not UTF-8", s, got)
		}
		for _, r := range got {
			if dangerous(r) {
				t.Fatalf("Visible(%q) = %q keeps %U", s, got, r)
			}
		}
		if again := render.Visible(got); again != got {
			t.Fatalf("Visible(%q) = %q, and Visible of that = %q", s, got, again)
		}
		if !strings.Contains(s, `\`) && utf8.ValidString(s) {
			var back string
			quoted := strings.NewReplacer(`"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(got)
			err := json.Unmarshal([]byte(`"`+quoted+`"`), &back)
			if err != nil || back != s {
				t.Fatalf("Visible(%q) = %q, which reads back as %q (%v)", s, got, back, err)
			}
		}
	})
}
