package callback_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/callback"
)

func TestRoundTrip(t *testing.T) {
	long := strings.Repeat("server-", 20)
	tests := []struct {
		d    callback.Data
		want string
	}{
		{callback.Data{Kind: callback.Option, Pending: 42, Option: 3}, "q:42:3"},
		{callback.Data{Kind: callback.Verdict, Pending: 7, Answer: callback.Approve}, "a:7:y"},
		{callback.Data{Kind: callback.Verdict, Pending: 7, Answer: callback.Deny}, "a:7:n"},
		{callback.Data{Kind: callback.Verdict, Pending: 9223372036854775807, Answer: callback.Always}, "a:9223372036854775807:A"},
		{callback.Data{Kind: callback.AppVerdict, Pending: 7, Answer: callback.Approve}, "w:7:y"},
		{callback.Data{Kind: callback.AppVerdict, Pending: 9223372036854775807, Answer: callback.Deny}, "w:9223372036854775807:n"},
		{callback.Data{Kind: callback.Servers, Action: callback.Disable, Page: 1, Server: "files"}, "s:d:1:files"},
		{callback.Data{Kind: callback.Servers, Action: callback.Restart, Server: "a:b"}, "s:r:0:a:b"},
		{callback.Data{Kind: callback.Servers, Action: callback.Page, Page: 2}, "s:p:2:"},
		{callback.Data{Kind: callback.Chat, Action: callback.Disable, Server: "files"}, "c:d:0:files"},
		{callback.Data{Kind: callback.Chat, Action: callback.Enable, Server: "web"}, "c:e:0:web"},
		{callback.Data{Kind: callback.Model, Profile: "local"}, "m:local"},
		{callback.Data{Kind: callback.Model, Profile: "qwen2.5_coder-32b"}, "m:qwen2.5_coder-32b"},
		{callback.Data{Kind: callback.Form, Pending: 12, Page: 3, Op: callback.FormChoose, Option: 1}, "f:12:3:c1"},
		{callback.Data{Kind: callback.Form, Pending: 12, Page: 0, Op: callback.FormToggle, Option: 99}, "f:12:0:t99"},
		{callback.Data{Kind: callback.Form, Pending: 9223372036854775807, Page: 49, Op: callback.FormSubmit}, "f:9223372036854775807:49:s"},
		{callback.Data{Kind: callback.Form, Pending: 1, Op: callback.FormDefault}, "f:1:0:D"},
		{callback.Data{Kind: callback.Stop, Turn: "0123456789ab"}, "x:0123456789ab"},
		{callback.Data{Kind: callback.TaskStop, Task: 1}, "k:1"},
		{callback.Data{Kind: callback.TaskStop, Task: 9223372036854775807}, "k:9223372036854775807"},
		{callback.Data{Kind: callback.Link, Link: "0123456789ab"}, "r:0123456789ab"},
		{callback.Data{Kind: callback.Link, Link: "0123456789ab", Answer: callback.Approve}, "r:0123456789ab:y"},
		{callback.Data{Kind: callback.Link, Link: "0123456789ab", Answer: callback.Deny}, "r:0123456789ab:n"},
		{callback.Data{Kind: callback.Disconnect, Owner: 123456789, Server: "tracker"}, "o:123456789:tracker"},
		{callback.Data{Kind: callback.Disconnect, Owner: 0, Server: "a:b"}, "o:0:a:b"},
		{callback.Data{Kind: callback.Disconnect, Owner: 9223372036854775807, Server: "#0123456789abcdef"}, "o:9223372036854775807:#0123456789abcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			got, err := callback.Decode(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.d {
				t.Errorf("Decode(%q) = %+v, want %+v", tt.want, got, tt.d)
			}
		})
	}
	t.Run("long server name", func(t *testing.T) {
		enc := callback.Data{Kind: callback.Servers, Action: callback.Enable, Page: 3, Server: long}.String()
		if len(enc) > callback.MaxLen {
			t.Fatalf("%q is %d bytes", enc, len(enc))
		}
		d, err := callback.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Names(long) || d.Names(long+"x") || d.Names("files") {
			t.Errorf("the key %q names the wrong servers", d.Server)
		}
		if d.String() != enc {
			t.Errorf("a decoded hash key encodes as %q, want %q", d.String(), enc)
		}
	})
	t.Run("profile name that does not fit", func(t *testing.T) {
		for _, name := range []string{strings.Repeat("m", 63), "my model", "ümlaut", "#0123456789abcdef"} {
			enc := callback.Data{Kind: callback.Model, Profile: name}.String()
			d, err := callback.Decode(enc)
			if err != nil || len(enc) > callback.MaxLen {
				t.Fatalf("%q: %q, %v", name, enc, err)
			}
			if !d.Names(name) || d.Names(name+"x") {
				t.Errorf("the key %q names the wrong profiles", d.Profile)
			}
		}
	})
	t.Run("name like a hash", func(t *testing.T) {
		d, err := callback.Decode(callback.Data{Kind: callback.Servers, Action: callback.Enable, Server: "#zz"}.String())
		if err != nil || !d.Names("#zz") {
			t.Errorf("a short name starting with # does not come back: %+v, %v", d, err)
		}
	})
}

func TestDecodeRejects(t *testing.T) {
	for _, s := range []string{
		"", "q", "q:", "q:1", "q:1:", "q::1", "q:-1:0", "q:1:-1", "q:01:2", "q:1:+2", "q:1:2:3", "q:1:x",
		"q:99999999999999999999:1", "a:1:Y", "w:1:A", "w:1:", "w:x:y", "a:1:yy", "a:1:", "x:1:y", "s:d:0:", "s:p:0:x", "s:z:0:x",
		"s:d:-1:x", "s:d:0", "s:dd:0:x", "s:d:0:#nothex", "s:d:0:#0123456789abcdeF",
		"s:d:0:" + strings.Repeat("x", 60),
		"c:r:0:x", "c:p:0:", "c:d:1:x", "c:d:0:",
		"m:", "m", "m:a b", "m:a:b", "m:#nothex", "m:#0123456789abcdeF", "m:" + strings.Repeat("x", 63), "m:ü", "m:a\n",
		"r:", "r:0123456789a", "r:0123456789abc", "r:0123456789ab:", "r:0123456789ab:A", "r:0123456789ab:yy", "r:0123456789AB",
		"o:", "o:1", "o:1:", "o::x", "o:-1:x", "o:01:x", "o:+1:x", "o:1:#nothex", "o:99999999999999999999:x", "o:" + strings.Repeat("1", 62),
		"x:", "x:ABC", "x:12g", "x:" + strings.Repeat("a", 33), "x:ab:", "x: a",
		"k:", "k:0", "k:01", "k:-1", "k:+1", "k:1:", "k:1a", "k:9223372036854775808", "k: 1",
		"f:1:0:", "f:1:0:q", "f:1:0:c", "f:1:0:s1", "f:1:0:c01", "f:1:0:c-1", "f:1::s", "f::0:s", "f:1:0:s:", "f:1:-1:s", "f:1:0:D0", "f:1:0",
	} {
		if d, err := callback.Decode(s); !errors.Is(err, callback.ErrInvalid) {
			t.Errorf("Decode(%q) = %+v, %v; want ErrInvalid", s, d, err)
		}
	}
}

// Whatever a client sends back, Decode either refuses it or returns data
// that encodes to the very same bytes within Telegram's limit.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"q:42:3", "a:7:A", "s:d:1:files", "s:p:2:", "s:e:0:#0123456789abcdef", "q:1:", "s:r:0:a:b", "m:local", "m:#0123456789abcdef", "f:12:3:c1", "f:1:0:z", "o:42:tracker", "o:0:#0123456789abcdef", "k:42"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := callback.Decode(s)
		if err != nil {
			return
		}
		if got := d.String(); got != s {
			t.Fatalf("Decode(%q) = %+v, which encodes as %q", s, d, got)
		}
	})
}

// Whatever is encoded fits in a button and decodes to the same button.
func FuzzEncode(f *testing.F) {
	f.Add(byte('s'), int64(1), 2, byte('d'), "files")
	f.Add(byte('q'), int64(5), 0, byte('y'), "")
	f.Add(byte('c'), int64(0), 0, byte('e'), "web")
	f.Add(byte('m'), int64(0), 0, byte('e'), "local")
	f.Add(byte(5), int64(9223372036854775807), 9223372036854775807, byte(0), "")
	f.Fuzz(func(t *testing.T, kind byte, pending int64, n int, act byte, server string) {
		if pending < 0 || n < 0 {
			return
		}
		var d callback.Data
		switch kind % 7 {
		case 6:
			if server == "" {
				return
			}
			d = callback.Data{Kind: callback.Disconnect, Owner: pending, Server: server}
		case 5:
			ops := []callback.FormOp{callback.FormChoose, callback.FormToggle, callback.FormDone, callback.FormDefault,
				callback.FormNext, callback.FormBack, callback.FormSubmit, callback.FormDecline, callback.FormCancel}
			d = callback.Data{Kind: callback.Form, Pending: pending, Page: n, Op: ops[int(act)%len(ops)]}
			if d.Op == callback.FormChoose || d.Op == callback.FormToggle {
				d.Option = n
			}
		case 0:
			d = callback.Data{Kind: callback.Option, Pending: pending, Option: n}
		case 1:
			d = callback.Data{Kind: callback.Verdict, Pending: pending, Answer: []callback.Answer{callback.Approve, callback.Deny, callback.Always}[int(act)%3]}
		case 4:
			d = callback.Data{Kind: callback.Model, Profile: server}
		case 3:
			if server == "" {
				return
			}
			d = callback.Data{Kind: callback.Chat, Action: []callback.Action{callback.Disable, callback.Enable}[int(act)%2], Server: server}
		default:
			a := []callback.Action{callback.Disable, callback.Enable, callback.Restart}[int(act)%3]
			if server == "" {
				return
			}
			d = callback.Data{Kind: callback.Servers, Action: a, Page: n, Server: server}
		}
		enc := d.String()
		if len(enc) > callback.MaxLen {
			t.Fatalf("%+v encodes as %d bytes", d, len(enc))
		}
		got, err := callback.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(%q) of %+v: %v", enc, d, err)
		}
		if d.Kind == callback.Servers || d.Kind == callback.Chat || d.Kind == callback.Disconnect {
			if !got.Names(server) {
				t.Fatalf("%q does not name %q", enc, server)
			}
			got.Server = server
		}
		if d.Kind == callback.Model {
			if !got.Names(server) {
				t.Fatalf("%q does not name %q", enc, server)
			}
			got.Profile = server
		}
		if got != d {
			t.Fatalf("Decode(%q) = %+v, want %+v", enc, got, d)
		}
	})
}
