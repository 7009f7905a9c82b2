package oauth_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
)

func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		want   oauth.Challenge
		ok     bool
	}{
		{"none", nil, oauth.Challenge{}, false},
		{"basic only", []string{`Basic realm="x"`}, oauth.Challenge{}, false},
		{"bearer", []string{`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource/mcp", scope="read write"`},
			oauth.Challenge{ResourceMetadata: "https://a/.well-known/oauth-protected-resource/mcp", Scope: []string{"read", "write"}}, true},
		{"after another scheme, case and escapes", []string{`Basic realm="a, b", bearer error=insufficient_scope, scope="a\"b"`},
			oauth.Challenge{Error: "insufficient_scope", Scope: []string{`a"b`}}, true},
		{"second header", []string{`Basic realm=x`, `Bearer scope=read`}, oauth.Challenge{Scope: []string{"read"}}, true},
		{"bearer then another scheme", []string{`Bearer scope="a", DPoP algs="ES256"`}, oauth.Challenge{Scope: []string{"a"}}, true},
		{"unterminated", []string{`Bearer scope="a`}, oauth.Challenge{Scope: []string{"a"}}, true},
		{"garbage", []string{"\x00\x01 ==,,"}, oauth.Challenge{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.header {
				h.Add("WWW-Authenticate", v)
			}
			got, ok := oauth.ParseChallenge(h)
			if ok != tt.ok || got.ResourceMetadata != tt.want.ResourceMetadata || got.Error != tt.want.Error || !slices.Equal(got.Scope, tt.want.Scope) {
				t.Errorf("ParseChallenge = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSealer(t *testing.T) {
	s, err := oauth.NewSealer("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	sealed := s.Seal([]byte("token"), "grant|a|")
	if got, err := s.Open(sealed, "grant|a|"); err != nil || string(got) != "token" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := s.Open(sealed, "grant|b|"); err == nil {
		t.Error("a value sealed for one place opened in another")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.Open(sealed, "grant|a|"); err == nil {
		t.Error("a tampered value opened")
	}
	other, _ := oauth.NewSealer("another-key-0123456789abcdef01234")
	if _, err := other.Open(s.Seal([]byte("x"), "w"), "w"); err == nil {
		t.Error("a value opened with another key")
	}
	if _, err := oauth.NewSealer(""); err != mcpgram.ErrNoKey {
		t.Errorf("NewSealer(\"\") = %v, want ErrNoKey", err)
	}
}
