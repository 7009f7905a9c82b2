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
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"github.com/subosito/gotenv"
)

// A Setting describes one configuration value.
type Setting struct {
	// Name is the environment variable; its lower-case form is the key in
	// mcpgram.yaml.
	Name    string
	Default string
	Secret  bool
	// Help says what the setting does, in Markdown: docs/configuration.md
	// is generated from it (go generate ./internal/config), links relative
	// to that page.
	Help string
}

// Settings lists every setting mcpgram reads, in the order of
// docs/configuration.md (generated from it), .env.example and
// mcpgram.example.yaml.
//
//go:generate go test -count=1 -run ^TestConfigurationPageIsCurrent$ . -update
var Settings = []Setting{
	{Name: "TELEGRAM_BOT_TOKEN", Secret: true, Help: "bot token from @BotFather; required for `run`"},
	{Name: "TELEGRAM_API_URL", Default: "https://api.telegram.org", Help: "Bot API server (a local Bot API server, or a test server)"},
	{Name: "TELEGRAM_MODE", Default: "polling", Help: "`polling` (getUpdates) or `webhook` (see [Webhook mode](operations.md#webhook-mode))"},
	{Name: "TELEGRAM_WEBHOOK_SECRET", Secret: true, Help: "required in webhook mode: the secret token Telegram sends with every update, 1 to 256 of `A-Z a-z 0-9 _ -`"},
	{Name: "TELEGRAM_WEBHOOK_URL", Default: "", Help: "webhook mode: the public HTTPS URL that reaches `/telegram`, registered at start; empty: register it yourself"},
	{Name: "OPENAI_API_KEY", Secret: true, Help: "required: key of the OpenAI-compatible endpoint; any value for a local one"},
	{Name: "OPENAI_BASE_URL", Default: "https://api.openai.com/v1", Help: "OpenAI, OpenRouter, DeepSeek, Groq, Ollama, vLLM, LM Studio, ..."},
	{Name: "OPENAI_MODEL", Default: "gpt-4o-mini", Help: "model name as the endpoint knows it"},
	{Name: "LLM_TEMPERATURE", Default: "0.2", Help: "sampling temperature, 0 to 2; lowered by 0.1 for each retry after a malformed call"},
	{Name: "LLM_MAX_TOKENS", Default: "4096", Help: "cap per reply (0: the endpoint's default); a reply streaming past 16 bytes a token of it is cut (see [A reply's size](telegram.md#a-replys-size))"},
	{Name: "LLM_TIMEOUT", Default: "120s", Help: "how long the endpoint may stay silent (a reply that keeps streaming is bounded by its size instead)"},
	{Name: "TOOL_CALLING", Default: "xml", Help: "how the model (of the `default` profile) calls tools: `xml` (the format taught in the prompt: any model), `native` (OpenAI `tools` and `tool_calls`), or `auto` (native where the endpoint accepts `tools`, XML where it refuses them); see [Native tool calling](tool-calls.md#native-tool-calling)"},
	{Name: "TOOL_SEARCH", Default: "10%", Help: "when the model (of every profile that sets no `tool_search`) searches for tools instead of reading them all on every call: `off`; a number of tools (search once more are connected; `0`: always); or a share of the profile's context budget that listing them all may take, such as `10%` (of 32,000 tokens for a profile without a budget). See [Many tools](tool-calls.md#many-tools-the-model-searches-for-them)"},
	{Name: "PINNED_TOOLS", Default: "", Help: "tools always listed in full (offered as functions) when the model searches for the others: `server/tool`, comma-separated, such as `memory/memory,clock/current_time`"},
	{Name: "MODEL_VISION", Default: "false", Help: "`true` when `OPENAI_MODEL` sees images: photos and images sent as files then go to it as image parts, and stay in the history by reference; `false` sends only a photo's caption"},
	{Name: "DEFAULT_MODEL", Default: "", Help: "the [model profile](#model-profiles) that answers chats that chose none with `/model`; empty: the profile named `default`, which the model settings of this table make (see [Model profiles](#model-profiles))"},
	{Name: "TRANSCRIPTION_MODEL", Default: "", Help: "speech-to-text model for voice notes, audio and video notes (for example `whisper-1`); empty: off, and voice messages are answered that they are not set up"},
	{Name: "TRANSCRIPTION_BASE_URL", Default: "", Help: "the OpenAI-compatible `/audio/transcriptions` endpoint, when not the model's; empty: `OPENAI_BASE_URL`"},
	{Name: "TRANSCRIPTION_API_KEY", Secret: true, Help: "key of the transcription endpoint, when not the model's; empty: `OPENAI_API_KEY`"},
	{Name: "MAX_DOCUMENT_BYTES", Default: "65536", Help: "largest text file (Markdown, CSV, JSON, source code…) the bot reads to the model, and the most of a PDF's text it reads (see [PDFs](telegram.md#pdfs))"},
	{Name: "MEDIA_RETENTION", Default: "30d", Help: "how long the images users send are kept for later turns, `/retry` and restarts, counted from when each was last sent: a Go duration (`720h`) or whole days (`30d`), at least `1h`; then they are deleted, and the history says so"},
	{Name: "MCP_SETTINGS", Default: "./mcp-settings.json", Help: "the MCP servers file (Cline / Claude Desktop format; see [the settings file](#the-settings-file-mcp-settingsjson))"},
	{Name: "MCP_SANDBOX", Default: "auto", Help: "how stdio servers run: `auto` (in a sandbox where this machine offers one, bubblewrap or else Landlock; unconfined, with a warning, where none), `required` (sandboxed or not started), `bubblewrap` or `landlock` (that one or not started), `off`; a server's `sandbox` field overrides it (see [What an MCP server can reach](security.md#what-an-mcp-server-can-reach))"},
	{Name: "MCP_CACHE_DIR", Default: "", Help: "where each stdio server's own package caches go (`npm_config_cache` for `npx`, `UV_CACHE_DIR` for `uvx`…), a folder per server; empty: `/var/cache/mcpgram/servers` for a bot run as root, else `~/.cache/mcpgram/servers` (see [Which paths a server is shown](security.md#which-paths-a-server-is-shown))"},
	{Name: "SERVER_START_WAIT", Default: "30s", Help: "how long a message waits for MCP servers that are still starting before the model is called, so that it sees their tools (the bot answers as soon as it starts, so messages sent while it was down arrive at once); a server not up by then is left out, and the model told so. `0`: no waiting"},
	{Name: "DATABASE_PATH", Default: "./data/mcpgram.db", Help: "SQLite database file"},
	{Name: "DATABASE_URL", Secret: true, Help: "`postgres://user:password@host:5432/database`: keep everything in PostgreSQL instead, for several instances sharing one store (see [PostgreSQL](operations.md#postgresql)); empty: SQLite at `DATABASE_PATH`"},
	{Name: "CHAT_LEASE", Default: "3s", Help: "PostgreSQL only: how long a chat stays with an instance that stopped renewing its leases (it died) before another instance takes it, with the turn that was running; the inbox is read three times a lease, and renewing is one write per instance (see [Scaling](operations.md#scaling-several-instances-one-bot))"},
	{Name: "MAX_TURNS", Default: "20", Help: "model calls allowed per user message"},
	{Name: "MAX_CONTEXT_TOKENS", Default: "32000", Help: "estimated tokens of history sent to the model; the oldest whole turns are dropped first. A turn reads from the database only the newest messages this budget can take (4 bytes a token), so a long conversation costs no more a turn than one that just fills it; the rest stays stored"},
	{Name: "AUTO_APPROVE", Default: "", Help: "`all` runs every tool and resource read without asking (but for calls that need the user's consent): trusted deployments only; empty asks for what is outside a server's `autoApprove`"},
	{Name: "ALLOWED_USER_IDS", Default: "", Help: "comma-separated Telegram user ids allowed to use the bot; empty: anyone, with a warning"},
	{Name: "ADMIN_USER_IDS", Default: "", Help: "comma-separated Telegram user ids of admins: `/servers`, `/stats`, \"Always allow\""},
	{Name: "RATE_LIMIT_PER_MINUTE", Default: "20", Help: "messages per user per minute (with PostgreSQL, counted for all instances together)"},
	{Name: "TELEGRAM_SENDS_PER_SECOND", Default: "30", Help: "new messages the bot sends per second over all its chats, in bursts of as many (Telegram allows a bot about 30); with PostgreSQL shared by all instances; `0`: not paced"},
	{Name: "TOKEN_BUDGET_PER_USER_DAY", Default: "0", Help: "tokens (read and written) one user may use per UTC day; `0`: no limit; admins are exempt (see [Budgets](telegram.md#budgets))"},
	{Name: "MAX_CONCURRENT_TURNS", Default: "64", Help: "turns running at once across all chats"},
	{Name: "LOG_LEVEL", Default: "info", Help: "`debug`, `info`, `warn` or `error`"},
	{Name: "LOG_FORMAT", Default: "text", Help: "`text` or `json`"},
	{Name: "HTTP_LISTEN", Default: "", Help: "address of the HTTP endpoint for machines, such as `127.0.0.1:9090`: `/metrics`, `/healthz`, `/readyz` (see [Metrics and health](operations.md#metrics-and-health)); empty: off"},
	{Name: "OAUTH_KEY", Secret: true, Help: "seals (encrypts) the tokens of the MCP servers signed in to, in the database (see [Protected remote servers](mcp.md#protected-remote-servers-signing-in)): a random secret of at least 32 characters, such as the output of `openssl rand -base64 32`; empty: on SQLite, a key made at the first sign-in and kept in `oauth.key` in `DATABASE_PATH`'s folder (keep it with the database); with `DATABASE_URL`, signing in is refused, since every instance must share one key"},
	{Name: "PUBLIC_URL", Default: "", Help: "the public `https://` address of `HTTP_LISTEN` (where people's browsers reach it), such as `https://bot.example.com`; with it `HTTP_LISTEN` serves mcpgram's OAuth Client ID Metadata Document at `PUBLIC_URL/oauth/client-metadata.json`, and the browsers of sign-ins made from the chat come back to `PUBLIC_URL/oauth/callback` (see [Each user's own account](mcp.md#each-users-own-account)); empty: none (the user sends the address their browser ended on to the chat)"},
	{Name: "OAUTH_CLIENT_METADATA_URL", Default: "", Help: "the client id mcpgram gives authorization servers that take a Client ID Metadata Document: an `https://` URL that serves it (see [Protected remote servers](mcp.md#protected-remote-servers-signing-in)); empty: `PUBLIC_URL/oauth/client-metadata.json` when `PUBLIC_URL` is set"},
}

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
	StartWait    time.Duration
	DatabasePath string
	// DatabaseURL, when set, selects PostgreSQL over the SQLite file at
	// DatabasePath.
	DatabaseURL string
	// ChatLease is how long a dead instance keeps its chats (PostgreSQL).
	ChatLease time.Duration

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

// ErrMissing reports a required setting that has no value.
var ErrMissing = errors.New("missing setting")

// A MissingError names a required setting that is not set.
type MissingError struct {
	Name string
	Hint string
}

func (e *MissingError) Error() string {
	if e.Hint == "" {
		return e.Name + " is not set"
	}
	return e.Name + " is not set: " + e.Hint
}

// Unwrap lets callers test for ErrMissing.
func (e *MissingError) Unwrap() error { return ErrMissing }

// missing makes one error of the required settings that are not set, so
// that a first run names them all at once: the error itself where there
// is one, nil where there is none, else one line naming them all, then
// each with its hint.
func missing(errs []*MissingError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return missingSet(errs)
}

// A missingSet is two or more MissingErrors, said in one line.
type missingSet []*MissingError

func (m missingSet) Error() string {
	names := make([]string, len(m))
	hints := make([]string, len(m))
	for i, e := range m {
		names[i], hints[i] = e.Name, e.Name
		if e.Hint != "" {
			hints[i] += ": " + e.Hint
		}
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return list + " are not set. " + strings.Join(hints, "; ")
}

// Unwrap gives each MissingError, for errors.As and errors.Is.
func (m missingSet) Unwrap() []error {
	out := make([]error, len(m))
	for i, e := range m {
		out[i] = e
	}
	return out
}

// Flags registers on fs the flags that Load reads.
func Flags(fs *pflag.FlagSet) {
	fs.String("config", "", "path of mcpgram.yaml (default: ./mcpgram.yaml if present)")
	fs.String("env-file", ".env", "path of a .env file, read if present; the environment wins over it")
	fs.String("mcp-settings", "", "the MCP servers file (overrides MCP_SETTINGS)")
	fs.String("database-path", "", "SQLite database file (overrides DATABASE_PATH)")
	fs.String("model", "", "model name (overrides OPENAI_MODEL)")
	fs.String("log-level", "", "debug, info, warn or error (overrides LOG_LEVEL)")
}

// Load reads the configuration from defaults, mcpgram.yaml, .env, the
// environment (through getenv) and the flags in fs, and validates it.
// Required secrets are checked by the commands that need them (Require).
func Load(fs *pflag.FlagSet, getenv func(string) (string, bool)) (*Config, error) {
	v := viper.New()
	for _, s := range Settings {
		v.SetDefault(key(s.Name), s.Default)
	}

	file := flagString(fs, "config")
	explicit := file != ""
	if !explicit {
		file = "mcpgram.yaml"
	}
	cfgFile := ""
	var models []rawProfile
	if _, err := os.Stat(file); err == nil {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read config file %s: %w", file, err)
		}
		cfgFile = file
		if err := checkKeys(file, v); err != nil {
			return nil, err
		}
		for _, s := range Settings {
			if s.Secret && v.InConfig(key(s.Name)) {
				return nil, fmt.Errorf("%s: %s is a secret and is read only from the environment, a .env file or %s_FILE, not from %s", key(s.Name), s.Name, s.Name, file)
			}
		}
		if v.InConfig("models") {
			if models, err = readModels(file); err != nil {
				return nil, err
			}
		}
	} else if explicit {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}

	dotenv, envFile, err := envFileOf(fs)
	if err != nil {
		return nil, err
	}
	var secretFiles []string

	values := map[string]string{}
	for _, s := range Settings {
		val := v.GetString(key(s.Name))
		if d, ok := dotenv[s.Name]; ok {
			val = d
		}
		if e, ok := getenv(s.Name); ok {
			val = e
		}
		if s.Secret {
			sec, file, err := secretFromFile(s.Name, dotenv, getenv)
			if err != nil {
				return nil, err
			}
			if file != "" {
				secretFiles = append(secretFiles, file)
			}
			if sec != "" && val == "" {
				val = sec
			}
		}
		values[s.Name] = strings.TrimSpace(val)
	}
	for flag, name := range map[string]string{
		"mcp-settings":  "MCP_SETTINGS",
		"database-path": "DATABASE_PATH",
		"model":         "OPENAI_MODEL",
		"log-level":     "LOG_LEVEL",
	} {
		if f := flagString(fs, flag); f != "" {
			values[name] = f
		}
	}
	c, err := parse(values)
	if err != nil {
		return nil, err
	}
	c.File = cfgFile
	c.envFile, c.secretFiles = envFile, secretFiles
	c.getenv, c.dotenv = getenv, dotenv
	if err := c.profiles(cfgFile, models); err != nil {
		return nil, err
	}
	return c, nil
}

// envFileOf reads the .env file --env-file names, if it exists, and
// returns its variables and its path ("" when there was none).
func envFileOf(fs *pflag.FlagSet) (map[string]string, string, error) {
	path := flagString(fs, "env-file")
	if path == "" {
		return map[string]string{}, "", nil
	}
	m, err := readDotEnv(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return m, path, nil
}

// LookupEnv looks a variable up the way settings are: the environment
// first, then the .env file. The hub expands ${env:VAR} in mcp-settings.json
// with it, so a variable set in .env reaches a server's env too.
func (c *Config) LookupEnv(name string) (string, bool) {
	if c.getenv != nil {
		if v, ok := c.getenv(name); ok {
			return v, true
		}
	}
	v, ok := c.dotenv[name]
	return v, ok
}

// checkKeys refuses a key of mcpgram.yaml that names no setting: a typo
// would otherwise leave the default in force without a word.
func checkKeys(file string, v *viper.Viper) error {
	known := make([]string, len(Settings))
	for i, s := range Settings {
		known[i] = key(s.Name)
	}
	var errs []error
	for _, k := range fileKeys(v) {
		if slices.Contains(known, k) || k == "models" || strings.HasPrefix(k, "models.") {
			continue
		}
		msg := fmt.Sprintf("%s: unknown setting %q", file, k)
		if best, ok := suggest.Closest(k, known); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// fileKeys lists the keys the config file itself set (viper's AllKeys
// mixes in the defaults), nested ones as a.b.
func fileKeys(v *viper.Viper) []string {
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			if sub, ok := val.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, prefix+strings.ToLower(k))
		}
	}
	fv := viper.New()
	fv.SetConfigFile(v.ConfigFileUsed())
	if fv.ReadInConfig() == nil {
		walk("", fv.AllSettings())
	}
	slices.Sort(out)
	return out
}

func key(name string) string { return strings.ToLower(name) }

func flagString(fs *pflag.FlagSet, name string) string {
	if fs == nil || fs.Lookup(name) == nil {
		return ""
	}
	s, _ := fs.GetString(name)
	return s
}

// secretFromFile reads NAME_FILE (from the environment or .env), the way
// container secrets are usually mounted, and returns the secret and the
// file's path.
func secretFromFile(name string, dotenv map[string]string, getenv func(string) (string, bool)) (secret, file string, err error) {
	path, ok := getenv(name + "_FILE")
	if !ok {
		path, ok = dotenv[name+"_FILE"]
	}
	if !ok || path == "" {
		return "", "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("%s_FILE: %w", name, err)
	}
	return strings.TrimSpace(string(b)), path, nil
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
	if d, err := time.ParseDuration(values["SERVER_START_WAIT"]); err != nil || d < 0 || d > time.Hour {
		errs = append(errs, fmt.Errorf("SERVER_START_WAIT: want a duration from 0 to 1h such as 30s, got %q", values["SERVER_START_WAIT"]))
	} else {
		c.StartWait = d
	}
	if d, err := time.ParseDuration(values["LLM_TIMEOUT"]); err != nil || d <= 0 {
		errs = append(errs, fmt.Errorf("LLM_TIMEOUT: want a duration such as 120s, got %q", values["LLM_TIMEOUT"]))
	} else {
		c.LLMTimeout = d
	}
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
	errs = append(errs, c.checkMode(values)...)
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
	c.ClientMetadataURL = values["OAUTH_CLIENT_METADATA_URL"]
	if c.ClientMetadataURL == "" && c.PublicURL != "" {
		c.ClientMetadataURL = c.PublicURL + ClientMetadataPath
	}
	return errs
}

// ClientMetadataPath is where, under PUBLIC_URL, mcpgram serves its OAuth
// Client ID Metadata Document.
const ClientMetadataPath = "/oauth/client-metadata.json"

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

// readDotEnv reads a .env file the way dotenv tools do (gotenv, which viper
// brings along): KEY=value lines, # comments, an optional export, single
// quotes kept as written, double quotes with escapes, and $VAR replaced by
// the environment or an earlier line. Keys it does not know are kept, so
// that NAME_FILE and ${env:VAR} in mcp-settings.json see them too.
func readDotEnv(path string) (map[string]string, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env, err := gotenv.StrictParse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return env, nil
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
