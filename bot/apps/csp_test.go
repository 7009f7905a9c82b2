package apps_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/apps"
)

// The policy of a page's frame is MCP Apps' restrictive default with
// exactly the origins the page declared added where the spec maps them,
// whatever a hostile declaration holds: a keyword, a bare *, an http://
// origin, quotes, semicolons or white space that would add directives,
// a path, a port out of range, a wildcard of a whole top-level domain,
// and past 16 origins a list, never reach the header.
func TestFrameCSP(t *testing.T) {
	const (
		script = "script-src 'self' 'unsafe-inline'"
		style  = "style-src 'self' 'unsafe-inline'"
		img    = "img-src 'self' data:"
		media  = "media-src 'self' data:"
		tail   = "sandbox allow-scripts"
	)
	join := func(parts ...string) string { return strings.Join(parts, "; ") }
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("https://h%d.example.com", i)
	}
	tests := []struct {
		name string
		page *mcpgram.AppPage
		want string
	}{
		{"none", nil, apps.DefaultFrameCSP},
		{"empty", &mcpgram.AppPage{}, apps.DefaultFrameCSP},
		{"permissions only", &mcpgram.AppPage{Permissions: []string{"camera"}}, apps.DefaultFrameCSP},
		{"one of each", &mcpgram.AppPage{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"}},
			join("default-src 'none'", script+" https://cdn.example.com", style+" https://cdn.example.com", img+" https://cdn.example.com",
				"font-src https://cdn.example.com", media+" https://cdn.example.com", "connect-src https://api.example.com", tail)},
		{"frames and base", &mcpgram.AppPage{FrameDomains: []string{"https://www.youtube.com"}, BaseURIDomains: []string{"https://base.example.com:8443"}},
			join("default-src 'none'", script, style, img, media, "connect-src 'none'", "frame-src https://www.youtube.com", "base-uri https://base.example.com:8443", tail)},
		{"wss and wildcards", &mcpgram.AppPage{ConnectDomains: []string{"wss://live.example.com", "https://*.api.example.com"}},
			join("default-src 'none'", script, style, img, media, "connect-src wss://live.example.com https://*.api.example.com", tail)},
		{"wss is for connecting only", &mcpgram.AppPage{ResourceDomains: []string{"wss://cdn.example.com"}, FrameDomains: []string{"wss://f.example.com"}}, apps.DefaultFrameCSP},
		{"hostile connect", &mcpgram.AppPage{ConnectDomains: []string{
			"*", "'self'", "'unsafe-eval'", "'none'", "http://api.example.com", "https:", "data:", "blob:", "https://*",
			"https://a.example.com; script-src 'unsafe-eval'", "https://a.example.com 'unsafe-eval'", "https://a.example.com,https://b.example.com",
			`https://a.example.com"`, "https://a.example.com\r\nX-Evil: 1", "https://a.example.com\t", " https://a.example.com",
			"https://a.example.com/path", "https://a.example.com:0", "https://a.example.com:65536", "https://a.example.com:08",
			"https://a.example.com:*", "https://*.com", "https://a.*.example.com", "https://-a.example.com", "https://A.example.com",
			"https://user@a.example.com", "https://[::1]", "https://a..example.com", "https://a.example.com.", "https://" + strings.Repeat("a", 64) + ".com",
			"https://" + strings.Repeat("a.", 120) + "com", "https://exämple.com",
		}}, apps.DefaultFrameCSP},
		{"hostile among good", &mcpgram.AppPage{ResourceDomains: []string{"'unsafe-eval'", "https://cdn.example.com", "https://cdn.example.com", "*"}},
			join("default-src 'none'", script+" https://cdn.example.com", style+" https://cdn.example.com", img+" https://cdn.example.com",
				"font-src https://cdn.example.com", media+" https://cdn.example.com", "connect-src 'none'", tail)},
		{"too many", &mcpgram.AppPage{ConnectDomains: many},
			join("default-src 'none'", script, style, img, media, "connect-src "+strings.Join(many[:mcpgram.MaxAppOrigins], " "), tail)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apps.FrameCSP(tt.page); got != tt.want {
				t.Errorf("FrameCSP =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// A frame is allowed only the features its page asks for that the
// operator grants, by their Permissions Policy names, in a fixed order.
func TestFrameAllow(t *testing.T) {
	page := &mcpgram.AppPage{Permissions: []string{"clipboardWrite", "camera", "geolocation"}}
	tests := []struct {
		page    *mcpgram.AppPage
		granted []string
		want    string
	}{
		{page, nil, ""},
		{nil, []string{"camera"}, ""},
		{page, []string{"microphone"}, ""},
		{page, []string{"clipboardWrite", "camera", "microphone"}, "camera; clipboard-write"},
		{&mcpgram.AppPage{Permissions: []string{"camera *; usb", "usb"}}, []string{"camera *; usb", "usb"}, ""},
	}
	for _, tt := range tests {
		if got := apps.FrameAllow(tt.page, tt.granted); got != tt.want {
			t.Errorf("FrameAllow(%v, %v) = %q, want %q", tt.page, tt.granted, got, tt.want)
		}
	}
}
