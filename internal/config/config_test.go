package config_test

import (
	"bytes"
	"errors"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"

	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/spf13/pflag"
)

// load runs config.Load in a fresh folder with the given files, args and
// environment, so the developer's own .env or mcpgram.yaml never leak in.
func load(t *testing.T, files map[string]string, env map[string]string, args ...string) (*config.Config, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	config.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return config.Load(fs, func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.MCPSettings, "./mcp-settings.json"; got != want {
		t.Errorf("MCPSettings = %q, want %q", got, want)
	}
	if got, want := c.MaxTurns, 20; got != want {
		t.Errorf("MaxTurns = %d, want %d", got, want)
	}
	if got, want := c.TelegramAPIURL, "https://api.telegram.org"; got != want {
		t.Errorf("TelegramAPIURL = %q, want %q", got, want)
	}
	if c.AutoApproveAll {
		t.Error("AutoApproveAll is on by default")
	}
	if len(c.AppsPermissions) != 0 {
		t.Errorf("AppsPermissions = %q, want none by default", c.AppsPermissions)
	}
	if c, err := load(t, nil, map[string]string{"APPS_PERMISSIONS": "clipboardWrite, camera,camera"}); err != nil || strings.Join(c.AppsPermissions, " ") != "clipboardWrite camera" {
		t.Errorf("APPS_PERMISSIONS=clipboardWrite, camera,camera: %q, %v", c.AppsPermissions, err)
	}
	if c.ToolCalling != "xml" {
		t.Errorf("ToolCalling = %q, want xml", c.ToolCalling)
	}
	for _, v := range []string{"native", "Auto"} {
		c, err := load(t, nil, map[string]string{"TOOL_CALLING": v})
		if err != nil || string(c.ToolCalling) != strings.ToLower(v) || c.Profiles[0].ToolCalling != c.ToolCalling {
			t.Errorf("TOOL_CALLING=%s: %q (default profile %q), %v", v, c.ToolCalling, c.Profiles[0].ToolCalling, err)
		}
	}
	if c.TokenBudgetPerUserDay != 0 {
		t.Errorf("TokenBudgetPerUserDay = %d, want 0 (no budget)", c.TokenBudgetPerUserDay)
	}
	if got, want := c.BackgroundAfter, 20*time.Second; got != want {
		t.Errorf("BackgroundAfter = %s, want %s", got, want)
	}
	if c, err := load(t, nil, map[string]string{"BACKGROUND_AFTER": "0"}); err != nil || c.BackgroundAfter != 0 {
		t.Errorf("BACKGROUND_AFTER=0: %s, %v; want 0 (off)", c.BackgroundAfter, err)
	}
	err = c.RequireTelegram()
	var miss *config.MissingError
	if !errors.As(err, &miss) || miss.Name != "TELEGRAM_BOT_TOKEN" || !strings.Contains(err.Error(), "BotFather") || !strings.Contains(err.Error(), "mcpgram chat") {
		t.Errorf("RequireTelegram() = %v, want a missing TELEGRAM_BOT_TOKEN naming BotFather and mcpgram chat", err)
	}
}

func TestPrecedence(t *testing.T) {
	files := map[string]string{
		"mcpgram.yaml": "max_turns: 7\nopenai_model: from-yaml\nmax_context_tokens: 5000\nlog_level: warn\n",
		".env":         "# comment\nOPENAI_MODEL=\"from-dotenv\"\nMAX_CONTEXT_TOKENS=6000\nOPENAI_API_KEY=sk-dotenv-123456\n",
	}
	env := map[string]string{"MAX_CONTEXT_TOKENS": "7000", "TOKEN_BUDGET_PER_USER_DAY": "250000"}
	c, err := load(t, files, env, "--log-level", "debug")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"yaml over default", c.MaxTurns, 7},
		{".env over yaml", c.Model, "from-dotenv"},
		{"environment over .env", c.MaxContextTokens, 7000},
		{"budget from the environment", int(c.TokenBudgetPerUserDay), 250000},
		{"flag over yaml", c.LogLevel.String(), "DEBUG"},
		{"secret from .env", c.OpenAIKey, "sk-dotenv-123456"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestSecretFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte("123:abcdefghij\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := load(t, nil, map[string]string{"TELEGRAM_BOT_TOKEN_FILE": path})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.TelegramToken, "123:abcdefghij"; got != want {
		t.Errorf("TelegramToken = %q, want %q", got, want)
	}
}

func TestErrorsNameTheSetting(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  string
	}{
		{"bad number", nil, map[string]string{"MAX_TURNS": "many"}, "MAX_TURNS"},
		{"zero turns", nil, map[string]string{"MAX_TURNS": "0"}, "MAX_TURNS"},
		{"bad temperature", nil, map[string]string{"LLM_TEMPERATURE": "hot"}, "LLM_TEMPERATURE"},
		{"bad ids", nil, map[string]string{"ADMIN_USER_IDS": "12,bob"}, "ADMIN_USER_IDS"},
		{"bad auto approve", nil, map[string]string{"AUTO_APPROVE": "some"}, "AUTO_APPROVE"},
		{"unknown app permission", nil, map[string]string{"APPS_PERMISSIONS": "camera,usb"}, "APPS_PERMISSIONS"},
		{"app permission as a policy", nil, map[string]string{"APPS_PERMISSIONS": "camera *"}, "APPS_PERMISSIONS"},
		{"apps origin without apps", nil, map[string]string{"APPS_ORIGIN": "https://apps.example.com"}, "APPS_ORIGIN: the apps are shown only with"},
		{"apps origin of http", nil, appsEnv("http://apps.example.com"), "APPS_ORIGIN: want https://host"},
		{"apps origin with a path", nil, appsEnv("https://apps.example.com/frames"), "APPS_ORIGIN: want https://host"},
		{"apps origin of a whole domain", nil, appsEnv("https://*.com"), "APPS_ORIGIN: want https://host"},
		{"apps origin the public one", nil, appsEnv("https://BOT.example.com:443/"), "names PUBLIC_URL's own host"},
		{"apps origin over the public one", nil, appsEnv("https://*.example.com"), "names PUBLIC_URL's own host"},
		{"bad url", nil, map[string]string{"OPENAI_BASE_URL": "localhost:11434"}, "OPENAI_BASE_URL"},
		{"bad timeout", nil, map[string]string{"LLM_TIMEOUT": "soon"}, "LLM_TIMEOUT"},
		{"bad retention", nil, map[string]string{"MEDIA_RETENTION": "a month"}, "MEDIA_RETENTION"},
		{"short retention", nil, map[string]string{"MEDIA_RETENTION": "5m"}, "MEDIA_RETENTION"},
		{"bad start wait", nil, map[string]string{"SERVER_START_WAIT": "a while"}, "SERVER_START_WAIT: want a duration"},
		{"negative start wait", nil, map[string]string{"SERVER_START_WAIT": "-1s"}, "SERVER_START_WAIT"},
		{"bad background after", nil, map[string]string{"BACKGROUND_AFTER": "later"}, "BACKGROUND_AFTER: want a duration"},
		{"long background after", nil, map[string]string{"BACKGROUND_AFTER": "2h"}, "BACKGROUND_AFTER"},
		{"bad tool calling", nil, map[string]string{"TOOL_CALLING": "json"}, "TOOL_CALLING: want xml, native or auto"},
		{"negative budget", nil, map[string]string{"TOKEN_BUDGET_PER_USER_DAY": "-5"}, "TOKEN_BUDGET_PER_USER_DAY"},
		{"secret in yaml", map[string]string{"mcpgram.yaml": "telegram_bot_token: 1:abc\n"}, nil, "TELEGRAM_BOT_TOKEN"},
		{"broken yaml", map[string]string{"mcpgram.yaml": "max_turns: [\n"}, nil, "mcpgram.yaml"},
		{"broken .env", map[string]string{".env": "OPENAI_MODEL=m\nJUSTAWORD\n"}, nil, ".env: line `JUSTAWORD`"},
		{"unclosed quote in .env", map[string]string{".env": "OPENAI_API_KEY=\"sk-abc\n"}, nil, ".env: missing quotes"},
		{"mistyped key", map[string]string{"mcpgram.yaml": "opneai_model: gpt-4o\n"}, nil, `unknown setting "opneai_model" (did you mean "openai_model"?)`},
		{"unknown key, nothing near", map[string]string{"mcpgram.yaml": "max_turns: 5\nfavourite_colour: blue\n"}, nil, `mcpgram.yaml: unknown setting "favourite_colour"`},
		{"nested unknown key", map[string]string{"mcpgram.yaml": "telegram:\n  token: x\n"}, nil, `unknown setting "telegram.token"`},
		{"bad mode", nil, map[string]string{"TELEGRAM_MODE": "push"}, "TELEGRAM_MODE"},
		{"webhook without secret", nil, map[string]string{"TELEGRAM_MODE": "webhook", "HTTP_LISTEN": ":8080"}, "TELEGRAM_WEBHOOK_SECRET is not set"},
		{"webhook without listener", nil, map[string]string{"TELEGRAM_MODE": "webhook", "TELEGRAM_WEBHOOK_SECRET": "abc"}, "HTTP_LISTEN"},
		{"webhook secret Telegram refuses", nil, map[string]string{"TELEGRAM_MODE": "webhook", "HTTP_LISTEN": ":8080", "TELEGRAM_WEBHOOK_SECRET": "a b"}, "TELEGRAM_WEBHOOK_SECRET: want"},
		{"webhook url not https", nil, map[string]string{"TELEGRAM_MODE": "webhook", "HTTP_LISTEN": ":8080", "TELEGRAM_WEBHOOK_SECRET": "abc", "TELEGRAM_WEBHOOK_URL": "http://bot.example.com/telegram"}, "TELEGRAM_WEBHOOK_URL"},
		{"bad listen address", nil, map[string]string{"HTTP_LISTEN": "9090"}, "HTTP_LISTEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.files, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load() error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

func TestMissingExplicitConfigFile(t *testing.T) {
	_, err := load(t, nil, nil, "--config", "nope.yaml")
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Load() error = %v, want one naming nope.yaml", err)
	}
}

func TestPrintMasksSecrets(t *testing.T) {
	env := map[string]string{
		"TELEGRAM_BOT_TOKEN": "123456:SECRETSECRETSECRET", "OPENAI_API_KEY": "sk-verysecretkey",
		"OPENAI_BASE_URL": "https://user:urlpass@llm.example.com/v1?api-key=querykey",
	}
	c, err := load(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.Print(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"SECRETSECRET", "verysecret", "urlpass", "querykey"} {
		if strings.Contains(out, secret) {
			t.Errorf("Print shows %q:\n%s", secret, out)
		}
	}
	for _, s := range config.Settings {
		if !strings.Contains(out, s.Name+"=") {
			t.Errorf("Print lacks %s", s.Name)
		}
	}
}

// The example files are what a newcomer copies: they must list every
// setting with its default.
func TestExamplesListEverySetting(t *testing.T) {
	root := filepath.Join("..", "..")
	env, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	yml, err := os.ReadFile(filepath.Join(root, "mcpgram.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range config.Settings {
		if line := s.Name + "=" + s.Default + "\n"; !strings.Contains(string(env), line) {
			t.Errorf(".env.example lacks %q", line)
		}
		want := strings.ToLower(s.Name) + `: "` + s.Default + `"`
		if s.Secret {
			want = s.Name + ": from the environment only"
		}
		if !strings.Contains(string(yml), want) {
			t.Errorf("mcpgram.example.yaml lacks %q", want)
		}
	}
}

func TestYAMLKeysInAnyCaseAreKnown(t *testing.T) {
	c, err := load(t, map[string]string{"mcpgram.yaml": "MAX_TURNS: 7\nopenai_model: m\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxTurns != 7 || c.Model != "m" {
		t.Errorf("MaxTurns, Model = %d, %q; want 7, m", c.MaxTurns, c.Model)
	}
}

// The hub expands ${env:VAR} with LookupEnv: the environment wins over
// .env, and .env serves what the environment lacks.
func TestLookupEnvSeesDotEnv(t *testing.T) {
	c, err := load(t, map[string]string{".env": "GITHUB_TOKEN=from-dotenv\nBOTH=from-dotenv\n"}, map[string]string{"BOTH": "from-env"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"GITHUB_TOKEN": "from-dotenv", "BOTH": "from-env"} {
		if got, ok := c.LookupEnv(name); !ok || got != want {
			t.Errorf("LookupEnv(%s) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := c.LookupEnv("UNSET_ANYWHERE"); ok {
		t.Error("LookupEnv found a variable set nowhere")
	}
}

// .env is read as dotenv tools read it; these are the rules
// docs/configuration.md promises, secrets with $ and # in single quotes above all.
func TestDotEnvSyntax(t *testing.T) {
	const file = `# comment
PLAIN=value # a comment after a space
HASH=abc#def
SPACED = padded
export EXPORTED=yes
DOUBLE="a \"quoted\" word\nand a second line"
SINGLE='pa$$W0RD#1 \n stays'
BASE=https://example.com
REF=${BASE}/v1
MULTI="line one
line two"
EMPTY=
` + "CRLF=windows\r\n"
	c, err := load(t, map[string]string{".env": file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"PLAIN":    "value",
		"HASH":     "abc",
		"SPACED":   "padded",
		"EXPORTED": "yes",
		"DOUBLE":   "a \"quoted\" word\nand a second line",
		"SINGLE":   `pa$$W0RD#1 \n stays`,
		"REF":      "https://example.com/v1",
		"MULTI":    "line one\nline two",
		"EMPTY":    "",
		"CRLF":     "windows",
	} {
		if got, ok := c.LookupEnv(name); !ok || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestLoggerRedactsSecrets(t *testing.T) {
	const token, key = "123456:SECRETSECRETSECRET", "sk-verysecretkey"
	for _, format := range []string{"text", "json"} {
		c, err := load(t, nil, map[string]string{"TELEGRAM_BOT_TOKEN": token, "OPENAI_API_KEY": key, "LOG_FORMAT": format})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		logger := c.Logger(&buf)
		logger.Error("turn failed", "err", errors.New("401: Authorization: Bearer "+key), "url", "https://api.telegram.org/bot"+url.PathEscape(token)+"/getMe")
		logger.With("token", token).Info("message with " + key)
		out := buf.String()
		if strings.Contains(out, "SECRETSECRET") || strings.Contains(out, "verysecret") {
			t.Errorf("%s log carries a secret:\n%s", format, out)
		}
		if n := strings.Count(out, "[redacted]"); n < 4 {
			t.Errorf("%s log has %d [redacted], want 4:\n%s", format, n, out)
		}
	}
}

func TestWebhookMode(t *testing.T) {
	c, err := load(t, nil, map[string]string{"TELEGRAM_MODE": "Webhook", "HTTP_LISTEN": "0.0.0.0:8080", "TELEGRAM_WEBHOOK_SECRET": "s3cret-_x", "TELEGRAM_WEBHOOK_URL": "https://bot.example.com/telegram"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Webhook || c.WebhookSecret != "s3cret-_x" || c.WebhookURL != "https://bot.example.com/telegram" || c.HTTPListen != "0.0.0.0:8080" {
		t.Errorf("config = %+v", c)
	}
	if !slices.Contains(c.Secrets(), "s3cret-_x") {
		t.Error("the webhook secret is not among the secrets the log hides")
	}
}

// DATABASE_URL selects PostgreSQL; its password, as written or
// percent-encoded, is never printed nor logged.
func TestDatabaseURL(t *testing.T) {
	const pw = "p@ss:w0rd/secret"
	dsn := "postgres://mcpgram:" + url.QueryEscape(pw) + "@db.example.com:5432/mcpgram?sslmode=require"
	c, err := load(t, nil, map[string]string{"DATABASE_URL": dsn})
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != dsn {
		t.Errorf("DatabaseURL = %q, want %q", c.DatabaseURL, dsn)
	}
	var buf bytes.Buffer
	if err := c.Print(&buf); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "w0rd") || !strings.Contains(out, "DATABASE_URL=postgres://****@db.example.com:5432/mcpgram?****\n") {
		t.Errorf("Print shows the password or hides the host:\n%s", out)
	}
	buf.Reset()
	logger := c.Logger(&buf)
	logger.Error("connect failed", "err", errors.New("password "+pw+" refused"), "dsn", dsn)
	if out := buf.String(); strings.Contains(out, "w0rd") || strings.Count(out, "[redacted]") < 2 {
		t.Errorf("the log carries the password:\n%s", out)
	}

	// A unix socket, the password in the query: hidden all the same.
	socket := "postgres:///mcpgram?host=/run/postgresql&password=" + url.QueryEscape(pw)
	if c, err := load(t, nil, map[string]string{"DATABASE_URL": socket}); err != nil {
		t.Errorf("DATABASE_URL on a socket: %v", err)
	} else if !slices.Contains(c.Secrets(), pw) {
		t.Errorf("Secrets() = %q, want the password of the query among them", c.Secrets())
	}
	// Empty: SQLite.
	if c, err := load(t, nil, nil); err != nil || c.DatabaseURL != "" {
		t.Errorf("default DatabaseURL = %q, %v; want empty", c.DatabaseURL, err)
	}
	// From a file, as a container secret.
	if c, err := load(t, map[string]string{"db-url": dsn + "\n"}, map[string]string{"DATABASE_URL_FILE": "db-url"}); err != nil || c.DatabaseURL != dsn {
		t.Errorf("DATABASE_URL_FILE: %q, %v; want %q", c.DatabaseURL, err, dsn)
	}
	// Never from mcpgram.yaml.
	if _, err := load(t, map[string]string{"mcpgram.yaml": "database_url: " + dsn + "\n"}, nil); err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("database_url in mcpgram.yaml: %v, want an error naming DATABASE_URL", err)
	}
	// Not a postgres:// URL: refused, without quoting it.
	for _, bad := range []string{
		"host=db user=mcpgram password=" + pw,
		"mysql://mcpgram:" + url.QueryEscape(pw) + "@db/mcpgram",
		"mcpgram:" + url.QueryEscape(pw) + "@db.example.com:5432/mcpgram",
	} {
		_, err := load(t, nil, map[string]string{"DATABASE_URL": bad})
		if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
			t.Errorf("DATABASE_URL=%q: %v, want an error naming DATABASE_URL", bad, err)
		} else if strings.Contains(err.Error(), "w0rd") {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}

// MEDIA_RETENTION takes days as well as Go durations; 30 days by default.
func TestMediaRetention(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
	}{{"", 30 * 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"36h", 36 * time.Hour}} {
		env := map[string]string{}
		if tt.value != "" {
			env["MEDIA_RETENTION"] = tt.value
		}
		c, err := load(t, nil, env)
		if err != nil {
			t.Fatal(err)
		}
		if c.MediaRetention != tt.want {
			t.Errorf("MEDIA_RETENTION=%q: %v, want %v", tt.value, c.MediaRetention, tt.want)
		}
	}
}

// appsEnv is the settings of a bot that shows apps, at PUBLIC_URL
// https://bot.example.com, with APPS_ORIGIN origin.
func appsEnv(origin string) map[string]string {
	return map[string]string{"PUBLIC_URL": "https://bot.example.com", "HTTP_LISTEN": ":8080", "APPS_ORIGIN": origin}
}

// APPS_ORIGIN is one origin or a wildcard of subdomains, in lower case,
// https's port 443 left unsaid; empty, none.
func TestAppsOrigin(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  mcpgram.AppsOrigin
	}{
		{"", mcpgram.AppsOrigin{}},
		{"https://Apps.example.com/", mcpgram.AppsOrigin{Host: "apps.example.com"}},
		{"https://bot.example.com:8443", mcpgram.AppsOrigin{Host: "bot.example.com", Port: "8443"}},
		{"https://*.apps.example.com:443", mcpgram.AppsOrigin{Host: "apps.example.com", Wildcard: true}},
	} {
		env := appsEnv(tc.value)
		cfg, err := load(t, nil, env)
		if err != nil || cfg.AppsOrigin != tc.want {
			t.Errorf("APPS_ORIGIN=%q: %+v, %v; want %+v", tc.value, cfg.AppsOrigin, err, tc.want)
		}
	}
}

// The bot shows MCP Apps only where browsers reach its listener at an
// https PUBLIC_URL: both settings, or no apps.
func TestShowsApps(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"PUBLIC_URL": "https://bot.example"}, false},
		{map[string]string{"HTTP_LISTEN": ":8080"}, false},
		{map[string]string{"PUBLIC_URL": "https://bot.example", "HTTP_LISTEN": ":8080"}, true},
	} {
		env := map[string]string{"TELEGRAM_BOT_TOKEN": "1:x"}
		maps.Copy(env, tc.env)
		cfg, err := load(t, nil, env)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ShowsApps(); got != tc.want {
			t.Errorf("%v: ShowsApps() = %v, want %v", tc.env, got, tc.want)
		}
	}
}
