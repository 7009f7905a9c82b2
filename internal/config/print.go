package config

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
)

// Print writes the effective configuration, one NAME=value line per
// setting, with secrets masked.
func (c *Config) Print(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if c.File != "" {
		fmt.Fprintf(bw, "# config file: %s\n", c.File)
	}
	for _, s := range Settings {
		val := c.values[s.Name]
		if strings.HasSuffix(s.Name, "_URL") && val != "" {
			val = MaskURL(val)
		} else if s.Secret {
			val = Mask(val)
		}
		fmt.Fprintf(bw, "%s=%s\n", s.Name, val)
	}
	for _, p := range c.Profiles {
		if p.Name == EnvProfile {
			continue
		}
		fmt.Fprintf(bw, "models.%s: base_url=%s api_key_env=%s model=%s temperature=%g max_tokens=%d context_tokens=%d tool_calling=%s tool_search=%s vision=%t prompt=%s\n",
			p.Name, MaskURL(p.BaseURL), p.APIKeyEnv, p.Model, p.Temperature, p.MaxTokens, p.ContextTokens, p.ToolCalling, p.ToolSearch, p.Vision, p.Prompt)
	}
	return bw.Flush()
}

// Mask hides a secret, keeping only enough to recognise which one it is.
func Mask(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) <= 8:
		return "****"
	default:
		return s[:4] + "****" + s[len(s)-2:]
	}
}

// MaskURL hides what a URL may carry of a credential: the user
// information and the query (some endpoints take their key as ?key=).
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a valid URL)"
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "****"
	}
	u.Fragment, u.RawFragment = "", ""
	out := u.String()
	if hadUser {
		// Set as user info, the stars would come out percent-encoded.
		out = strings.Replace(out, "//", "//****@", 1)
	}
	return out
}

// Secrets returns the values of the secret settings that are set, and the
// credentials inside the URL settings (the password as written and
// decoded, long query values), for a log handler to redact.
func (c *Config) Secrets() []string {
	var out []string
	for _, s := range Settings {
		val := c.values[s.Name]
		if val == "" {
			continue
		}
		if s.Secret {
			out = append(out, val)
		}
		if !strings.HasSuffix(s.Name, "_URL") {
			continue
		}
		u, err := url.Parse(val)
		if err != nil {
			continue
		}
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
			if _, raw, ok := strings.Cut(u.User.String(), ":"); ok && raw != p {
				out = append(out, raw)
			}
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= 8 {
					out = append(out, v)
				}
			}
		}
	}
	for _, p := range c.Profiles {
		if p.APIKey != "" && p.Name != EnvProfile {
			out = append(out, p.APIKey)
		}
	}
	return out
}

// Logger builds the process logger from the configuration.
func (c *Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	w = NewRedactor(w, c.Secrets())
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
