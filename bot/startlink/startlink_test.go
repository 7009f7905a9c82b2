package startlink_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/startlink"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64 // 0: refused
	}{
		{"f1", 1},
		{"f9223372036854775807", 9223372036854775807},
		{"f9223372036854775808", 0},
		{"f0", 0},
		{"f012", 0},
		{"f-1", 0},
		{"f+1", 0},
		{"f", 0},
		{"", 0},
		{"F1", 0},
		{"g1", 0},
		{"f1 ", 0},
		{"f1\n", 0},
		{"f١", 0},
		{"f" + strings.Repeat("1", 64), 0},
	} {
		t.Run(c.in, func(t *testing.T) {
			p, err := startlink.Parse(c.in)
			if got := p.Form; got != c.want || (err == nil) != (c.want != 0) {
				t.Errorf("Parse(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}

func TestURL(t *testing.T) {
	if got, want := startlink.URL("mcpgram_bot", startlink.Form(12)), "https://t.me/mcpgram_bot?start=f12"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Whatever Parse accepts is what the encoder writes, within Telegram's
// limits.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"f1", "f12", "f0", "f-1", "f9223372036854775807", "", "x", "f1_", "f١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := startlink.Parse(s)
		if err != nil {
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("Parse(%q) = %+v, which encodes as %q", s, p, got)
		}
	})
}

// Every form id encodes to a payload Telegram takes, which parses back.
func FuzzForm(f *testing.F) {
	f.Add(int64(1))
	f.Add(int64(9223372036854775807))
	f.Fuzz(func(t *testing.T, id int64) {
		if id <= 0 {
			return
		}
		s := startlink.Form(id)
		if len(s) > startlink.MaxLen || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("Form(%d) = %q, not a payload Telegram takes", id, s)
		}
		if p, err := startlink.Parse(s); err != nil || p.Form != id {
			t.Fatalf("Parse(Form(%d)) = %+v, %v", id, p, err)
		}
	})
}
