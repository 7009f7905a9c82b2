// Package config reads mcpgram's configuration: defaults, then an optional
// mcpgram.yaml, then a .env file, then the environment, then flags. It is
// validated once, at start, with errors that name the setting at fault.
//
// Secrets (the Telegram token, the webhook secret, the model API key and
// DATABASE_URL, which may hold a password) come only from the environment,
// a .env file, or a file named by NAME_FILE; they are never read from
// mcpgram.yaml and never printed unmasked.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
)

// A Config is the validated configuration.
type Config struct {
	TelegramToken  string
	TelegramAPIURL string
	// Webhook is TELEGRAM_MODE=webhook, with its secret and public URL.
	Webhook       bool
	WebhookSecret string
	WebhookURL    string

	OpenAIKey     string
	OpenAIBaseURL string
	Model         string
	Temperature   float32
	MaxTokens     int
	LLMTimeout    time.Duration
	// ToolCalling is TOOL_CALLING: "xml", "native" or "auto".
	ToolCalling mcpgram.ToolCalling
	// ToolSearch is TOOL_SEARCH, the threshold of profiles that set none.
	ToolSearch mcpgram.ToolSearch
	// PinnedTools are PINNED_TOOLS, as server and tool.
	PinnedTools []mcpgram.ToolRef

	// Vision says the model sees images (MODEL_VISION).
	Vision bool

	// Profiles are the models a chat may answer with: the one the
	// settings above make, named EnvProfile, then those of models: in
	// mcpgram.yaml, in the order written. DefaultProfile names the one a
	// chat that chose none gets (DEFAULT_MODEL).
	Profiles       []mcpgram.Profile
	DefaultProfile string

	// Transcription is the speech-to-text endpoint; Model empty: off.
	TranscriptionModel   string
	TranscriptionBaseURL string
	TranscriptionKey     string
	MaxDocumentBytes     int
	// MediaRetention is how long images users sent are kept.
	MediaRetention time.Duration

	MCPSettings string
	// Sandbox is how stdio MCP servers run whose entries say nothing
	// (MCP_SANDBOX).
	Sandbox mcpgram.SandboxMode
	// CacheDir holds each stdio server's package caches (MCP_CACHE_DIR);
	// empty: the hub's default.
	CacheDir string
	// StartWait is how long a turn waits for servers still starting
	// (SERVER_START_WAIT).
	StartWait time.Duration
	// BackgroundAfter is how long a plain tool call keeps its chat
	// waiting before it goes on in the background (BACKGROUND_AFTER); 0:
	// never.
	BackgroundAfter time.Duration
	DatabasePath    string
	// DatabaseURL, when set, selects PostgreSQL over the SQLite file at
	// DatabasePath.
	DatabaseURL string
	// ChatLease is how long a dead instance keeps its chats (PostgreSQL).
	ChatLease time.Duration
	// TaskLease is how long a dead instance keeps its tasks (PostgreSQL).
	TaskLease time.Duration

	MaxTurns         int
	MaxContextTokens int
	AutoApproveAll   bool

	AllowedUserIDs     []int64
	AdminUserIDs       []int64
	RateLimitPerMinute int
	SendsPerSecond     float64
	// TokenBudgetPerUserDay caps one user's tokens per UTC day; 0: none.
	TokenBudgetPerUserDay int64
	MaxConcurrentTurns    int

	LogLevel  slog.Level
	LogFormat string

	// HTTPListen is the address of /metrics, /healthz and /readyz; empty: off.
	HTTPListen string

	// OAuthKey seals the sign-ins to MCP servers (OAUTH_KEY); empty: a
	// key file beside the SQLite database, or, with DatabaseURL, none.
	OAuthKey string
	// PublicURL is where people's browsers reach HTTP_LISTEN; empty: none.
	PublicURL string
	// AppsOrigin is where the apps' pages are served apart from
	// PUBLIC_URL (APPS_ORIGIN); zero: under PUBLIC_URL.
	AppsOrigin mcpgram.AppsOrigin
	// AppsPermissions are the browser features an MCP App's page may be
	// granted when it asks (APPS_PERMISSIONS, MCP Apps' names); none by
	// default.
	AppsPermissions []string
	// ClientMetadataURL is mcpgram's OAuth client id for authorization
	// servers that take a Client ID Metadata Document; empty: none.
	ClientMetadataURL string

	// File is the mcpgram.yaml that was read, if any.
	File string
	// envFile is the .env file that was read, if any, and secretFiles the
	// files that NAME_FILE settings named: with File and the database,
	// what Protected lists.
	envFile     string
	secretFiles []string

	values map[string]string
	// getenv and dotenv answer LookupEnv.
	getenv func(string) (string, bool)
	dotenv map[string]string
}

// toolRefs reads a comma-separated list of server/tool.
func toolRefs(name, s string) ([]mcpgram.ToolRef, error) {
	var out []mcpgram.ToolRef
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		server, tool, ok := strings.Cut(item, "/")
		server, tool = strings.TrimSpace(server), strings.TrimSpace(tool)
		if !ok || server == "" || tool == "" {
			return nil, fmt.Errorf("%s: want server/tool entries separated by commas, such as memory/memory, got %q", name, item)
		}
		out = append(out, mcpgram.ToolRef{Server: server, Tool: tool})
	}
	return out, nil
}

func parse(values map[string]string) (*Config, error) {
	c := &Config{
		TelegramToken:  values["TELEGRAM_BOT_TOKEN"],
		TelegramAPIURL: strings.TrimRight(values["TELEGRAM_API_URL"], "/"),
		OpenAIKey:      values["OPENAI_API_KEY"],
		OpenAIBaseURL:  strings.TrimRight(values["OPENAI_BASE_URL"], "/"),
		Model:          values["OPENAI_MODEL"],
		MCPSettings:    values["MCP_SETTINGS"],
		Sandbox:        mcpgram.SandboxMode(strings.ToLower(values["MCP_SANDBOX"])),
		CacheDir:       values["MCP_CACHE_DIR"],
		DatabasePath:   values["DATABASE_PATH"],
		DatabaseURL:    values["DATABASE_URL"],
		LogFormat:      strings.ToLower(values["LOG_FORMAT"]),
		HTTPListen:     values["HTTP_LISTEN"],
		OAuthKey:       values["OAUTH_KEY"],
		PublicURL:      strings.TrimRight(values["PUBLIC_URL"], "/"),

		TranscriptionModel:   values["TRANSCRIPTION_MODEL"],
		TranscriptionBaseURL: strings.TrimRight(cmp.Or(values["TRANSCRIPTION_BASE_URL"], values["OPENAI_BASE_URL"]), "/"),
		TranscriptionKey:     cmp.Or(values["TRANSCRIPTION_API_KEY"], values["OPENAI_API_KEY"]),
		WebhookSecret:        values["TELEGRAM_WEBHOOK_SECRET"],
		WebhookURL:           values["TELEGRAM_WEBHOOK_URL"],
		values:               values,
	}
	errs := c.parseNumbers(values)
	errs = append(errs, c.parseDurations(values)...)
	errs = append(errs, c.parseChoices(values)...)
	errs = append(errs, c.checkMode(values)...)
	errs = append(errs, c.checkURLs(values)...)
	errs = append(errs, c.checkOAuth(values)...)
	for _, name := range []string{"MCP_SETTINGS", "DATABASE_PATH", "OPENAI_MODEL"} {
		if values[name] == "" {
			errs = append(errs, &MissingError{Name: name})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// parseNumbers reads the numeric settings into c.
func (c *Config) parseNumbers(values map[string]string) []error {
	var errs []error
	num := func(name string, min int) int {
		n, err := strconv.Atoi(values[name])
		if err != nil || n < min {
			errs = append(errs, fmt.Errorf("%s: want a whole number of at least %d, got %q", name, min, values[name]))
		}
		return n
	}
	c.MaxTokens = num("LLM_MAX_TOKENS", 0)
	c.MaxTurns = num("MAX_TURNS", 1)
	c.MaxContextTokens = num("MAX_CONTEXT_TOKENS", 1000)
	c.RateLimitPerMinute = num("RATE_LIMIT_PER_MINUTE", 1)
	c.TokenBudgetPerUserDay = int64(num("TOKEN_BUDGET_PER_USER_DAY", 0))
	c.MaxConcurrentTurns = num("MAX_CONCURRENT_TURNS", 1)
	c.MaxDocumentBytes = num("MAX_DOCUMENT_BYTES", 1)
	if v, err := strconv.ParseFloat(values["TELEGRAM_SENDS_PER_SECOND"], 64); err != nil || v < 0 || v > 1000 {
		errs = append(errs, fmt.Errorf("TELEGRAM_SENDS_PER_SECOND: want a number from 0 to 1000, got %q", values["TELEGRAM_SENDS_PER_SECOND"]))
	} else {
		c.SendsPerSecond = v
	}
	if v, err := strconv.ParseBool(values["MODEL_VISION"]); err != nil {
		errs = append(errs, fmt.Errorf("MODEL_VISION: want true or false, got %q", values["MODEL_VISION"]))
	} else {
		c.Vision = v
	}

	if t, err := strconv.ParseFloat(values["LLM_TEMPERATURE"], 32); err != nil || t < 0 || t > 2 {
		errs = append(errs, fmt.Errorf("LLM_TEMPERATURE: want a number from 0 to 2, got %q", values["LLM_TEMPERATURE"]))
	} else {
		c.Temperature = float32(t)
	}
	return errs
}

// parseDurations reads the durations into c.
func (c *Config) parseDurations(values map[string]string) []error {
	var errs []error
	if d, err := parseDays(values["MEDIA_RETENTION"]); err != nil || d < time.Hour {
		errs = append(errs, fmt.Errorf("MEDIA_RETENTION: want a duration of at least 1h such as 720h, or days such as 30d, got %q", values["MEDIA_RETENTION"]))
	} else {
		c.MediaRetention = d
	}
	if d, err := time.ParseDuration(values["CHAT_LEASE"]); err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("CHAT_LEASE: want a duration of at least 1s such as 3s, got %q", values["CHAT_LEASE"]))
	} else {
		c.ChatLease = d
	}
	if d, err := time.ParseDuration(values["TASK_LEASE"]); err != nil || d < time.Second {
		errs = append(errs, fmt.Errorf("TASK_LEASE: want a duration of at least 1s such as 30s, got %q", values["TASK_LEASE"]))
	} else {
		c.TaskLease = d
	}
	if d, err := time.ParseDuration(values["SERVER_START_WAIT"]); err != nil || d < 0 || d > time.Hour {
		errs = append(errs, fmt.Errorf("SERVER_START_WAIT: want a duration from 0 to 1h such as 30s, got %q", values["SERVER_START_WAIT"]))
	} else {
		c.StartWait = d
	}
	if d, err := time.ParseDuration(values["BACKGROUND_AFTER"]); err != nil || d < 0 || d > time.Hour {
		errs = append(errs, fmt.Errorf("BACKGROUND_AFTER: want a duration from 0 to 1h such as 20s, got %q", values["BACKGROUND_AFTER"]))
	} else {
		c.BackgroundAfter = d
	}
	if d, err := time.ParseDuration(values["LLM_TIMEOUT"]); err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("LLM_TIMEOUT: want a duration such as 120s, got %q", values["LLM_TIMEOUT"]))
	} else {
		c.LLMTimeout = d
	}
	return errs
}

// parseChoices reads the settings that take one of a few words, or a
// list, into c.
func (c *Config) parseChoices(values map[string]string) []error {
	var errs []error
	c.ToolSearch = mcpgram.ToolSearch(strings.TrimSpace(values["TOOL_SEARCH"]))
	if err := c.ToolSearch.Check(); err != nil {
		errs = append(errs, fmt.Errorf("TOOL_SEARCH: %w", err))
	}
	if pinned, err := toolRefs("PINNED_TOOLS", values["PINNED_TOOLS"]); err != nil {
		errs = append(errs, err)
	} else {
		c.PinnedTools = pinned
	}
	if v := mcpgram.ToolCalling(strings.ToLower(strings.TrimSpace(values["TOOL_CALLING"]))); v.Valid() {
		c.ToolCalling = v
	} else {
		errs = append(errs, fmt.Errorf("TOOL_CALLING: want xml, native or auto, got %q", values["TOOL_CALLING"]))
	}
	switch strings.ToLower(values["AUTO_APPROVE"]) {
	case "", "none", "false":
	case "all":
		c.AutoApproveAll = true
	default:
		errs = append(errs, fmt.Errorf("AUTO_APPROVE: want empty or \"all\", got %q", values["AUTO_APPROVE"]))
	}
	var err error
	if c.AppsPermissions, err = appsPermissions(values["APPS_PERMISSIONS"]); err != nil {
		errs = append(errs, err)
	}
	if c.AllowedUserIDs, err = ids("ALLOWED_USER_IDS", values["ALLOWED_USER_IDS"]); err != nil {
		errs = append(errs, err)
	}
	if c.AdminUserIDs, err = ids("ADMIN_USER_IDS", values["ADMIN_USER_IDS"]); err != nil {
		errs = append(errs, err)
	}
	if err := c.LogLevel.UnmarshalText([]byte(values["LOG_LEVEL"])); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL: want debug, info, warn or error, got %q", values["LOG_LEVEL"]))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("LOG_FORMAT: want text or json, got %q", values["LOG_FORMAT"]))
	}
	if _, err := mcpgram.ParseSandboxMode(string(c.Sandbox)); err != nil {
		errs = append(errs, fmt.Errorf("MCP_SANDBOX: %w", err))
	}
	return errs
}

// checkURLs checks the addresses and URLs among the settings of c.
func (c *Config) checkURLs(values map[string]string) []error {
	var errs []error
	if a := c.HTTPListen; a != "" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("HTTP_LISTEN: want host:port such as 127.0.0.1:9090, got %q", a))
		}
	}
	for _, name := range []string{"TELEGRAM_API_URL", "OPENAI_BASE_URL", "TRANSCRIPTION_BASE_URL"} {
		u := values[name]
		if u == "" && name == "TRANSCRIPTION_BASE_URL" {
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs = append(errs, fmt.Errorf("%s: want an http:// or https:// URL, got %q", name, u))
		}
	}
	if err := checkDatabaseURL(c.DatabaseURL); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// checkOAuth checks the settings of signing in to MCP servers, and sets
// ClientMetadataURL from PUBLIC_URL when it is not given.
func (c *Config) checkOAuth(values map[string]string) []error {
	var errs []error
	if k := c.OAuthKey; k != "" && len(k) < mcpgram.MinOAuthKeyLength {
		errs = append(errs, fmt.Errorf("OAUTH_KEY: want at least %d characters (such as the output of `openssl rand -base64 32`), got %d", mcpgram.MinOAuthKeyLength, len(k)))
	}
	for _, name := range []string{"PUBLIC_URL", "OAUTH_CLIENT_METADATA_URL"} {
		if u, err := url.Parse(values[name]); values[name] != "" && (err != nil || u.Scheme != "https" || u.Host == "") {
			errs = append(errs, fmt.Errorf("%s: want an https:// URL, got %q", name, values[name]))
		}
	}
	if v := values["APPS_ORIGIN"]; v != "" {
		errs = append(errs, c.appsOrigin(v)...)
	}
	c.ClientMetadataURL = values["OAUTH_CLIENT_METADATA_URL"]
	if c.ClientMetadataURL == "" && c.PublicURL != "" {
		c.ClientMetadataURL = c.PublicURL + ClientMetadataPath
	}
	return errs
}

// ShowsApps reports whether the bot can show MCP Apps: people's browsers
// reach its HTTP listener at an https PUBLIC_URL (Telegram opens Mini Apps
// over https only), where the apps' pages are served.
func (c *Config) ShowsApps() bool {
	return strings.HasPrefix(c.PublicURL, "https://") && c.HTTPListen != ""
}

// appsOrigin reads APPS_ORIGIN, v: an origin apart from PUBLIC_URL's,
// of a bot that shows apps.
func (c *Config) appsOrigin(v string) []error {
	o, err := mcpgram.ParseAppsOrigin(v)
	if err != nil {
		return []error{fmt.Errorf("APPS_ORIGIN: %w", err)}
	}
	if !c.ShowsApps() {
		return []error{fmt.Errorf("APPS_ORIGIN: the apps are shown only with an https:// PUBLIC_URL and HTTP_LISTEN, and this bot has not both")}
	}
	if u, err := url.Parse(c.PublicURL); err == nil {
		if _, same := o.Match(u.Host); same {
			return []error{fmt.Errorf("APPS_ORIGIN: %q names PUBLIC_URL's own host, want another host name (or port)", v)}
		}
	}
	c.AppsOrigin = o
	return nil
}

// ClientMetadataPath is where, under PUBLIC_URL, mcpgram serves its OAuth
// Client ID Metadata Document.
const ClientMetadataPath = "/oauth/client-metadata.json"

// appsPermissions reads APPS_PERMISSIONS: names of MCP Apps' permissions,
// each once.
func appsPermissions(s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if _, ok := mcpgram.AppPermissions[f]; !ok {
			return nil, fmt.Errorf("APPS_PERMISSIONS: want names among %s, got %q", strings.Join(mcpgram.AppPermissionOrder, ", "), f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func ids(name, s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a Telegram user id (want numbers separated by commas)", name, f)
		}
		out = append(out, id)
	}
	return out, nil
}

// checkDatabaseURL accepts an empty DATABASE_URL or a postgres:// URL. The
// libpq key=value form is refused: masking its password for the log is
// guesswork. The error never quotes the value, which holds a password.
func checkDatabaseURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return errors.New("DATABASE_URL: want a URL such as postgres://mcpgram:PASSWORD@db.example.com:5432/mcpgram (special characters of the password percent-encoded), got something else")
	}
	return nil
}

// webhookSecret is the syntax Telegram takes for a webhook's secret token.
var webhookSecret = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// checkMode validates TELEGRAM_MODE and what webhook mode needs.
func (c *Config) checkMode(values map[string]string) []error {
	var errs []error
	switch strings.ToLower(values["TELEGRAM_MODE"]) {
	case "polling":
		return nil
	case "webhook":
		c.Webhook = true
	default:
		return []error{fmt.Errorf("TELEGRAM_MODE: want polling or webhook, got %q", values["TELEGRAM_MODE"])}
	}
	if c.HTTPListen == "" {
		errs = append(errs, errors.New("HTTP_LISTEN: webhook mode serves /telegram there; set an address such as 0.0.0.0:8080"))
	}
	if s := c.WebhookSecret; s == "" {
		errs = append(errs, &MissingError{Name: "TELEGRAM_WEBHOOK_SECRET", Hint: "webhook mode needs it"})
	} else if !webhookSecret.MatchString(s) {
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_SECRET: want 1 to 256 of A-Z a-z 0-9 _ and -"))
	}
	if u := c.WebhookURL; u != "" && !strings.HasPrefix(u, "https://") {
		errs = append(errs, fmt.Errorf("TELEGRAM_WEBHOOK_URL: Telegram posts only to https:// URLs, got %q", u))
	}
	return errs
}

// RequireTelegram checks what `mcpgram run` needs beyond Load.
// Every one missing is named at once.
func (c *Config) RequireTelegram() error {
	var errs []*MissingError
	if c.TelegramToken == "" {
		errs = append(errs, &MissingError{Name: "TELEGRAM_BOT_TOKEN", Hint: "create a bot with @BotFather in Telegram and set the token it gives you (or try mcpgram in a terminal with `mcpgram chat`)"})
	}
	return missing(append(errs, c.missingKeys()...))
}

// RequireModel checks what any command that talks to the model needs.
// Every profile's key must be set: a chat may switch to any of them.
func (c *Config) RequireModel() error {
	return missing(c.missingKeys())
}

// parseDays is time.ParseDuration that also takes whole days, as "30d".
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > 100*365 {
			return 0, fmt.Errorf("bad number of days %q", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
