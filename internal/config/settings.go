package config

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
	{Name: "BACKGROUND_AFTER", Default: "20s", Help: "how long a tool call that its server does not run as a task may keep the chat waiting: past it (time spent waiting for the user's answer to a server's form or sign-in not counted) the call goes on in the background, its card in the chat with a Stop button, the chat free, and its result comes as a reply once it is done; unlike a task's, such a call lives in the bot's process and cannot outlive a restart (see [Long calls in the background](mcp.md#long-calls-in-the-background)); at most `1h`, `0`: calls keep the chat waiting to their end"},
	{Name: "DATABASE_PATH", Default: "./data/mcpgram.db", Help: "SQLite database file"},
	{Name: "DATABASE_URL", Secret: true, Help: "`postgres://user:password@host:5432/database`: keep everything in PostgreSQL instead, for several instances sharing one store (see [PostgreSQL](operations.md#postgresql)); empty: SQLite at `DATABASE_PATH`"},
	{Name: "CHAT_LEASE", Default: "3s", Help: "PostgreSQL only: how long a chat stays with an instance that stopped renewing its leases (it died) before another instance takes it, with the turn that was running; the inbox is read three times a lease, and renewing is one write per instance (see [Scaling](operations.md#scaling-several-instances-one-bot))"},
	{Name: "TASK_LEASE", Default: "30s", Help: "PostgreSQL only: how long the open tasks an instance polls, and the calls it runs in the background, stay with it once it stopped renewing their leases (it died) before another instance takes them over: it polls the tasks to their end, and tells the chats of the calls that they were cut short; the leases are renewed three times a lease, in one write per instance whatever the number of tasks (see [Tasks across instances](mcp.md#tasks-across-instances))"},
	{Name: "MAX_TURNS", Default: "20", Help: "model calls allowed per user message"},
	{Name: "MAX_CONTEXT_TOKENS", Default: "32000", Help: "estimated tokens of history sent to the model; the oldest whole turns are dropped first. A turn reads from the database only the newest messages this budget can take (4 bytes a token), so a long conversation costs no more a turn than one that just fills it; the rest stays stored. What a long conversation's turn read (16 KB and more) stays in memory for its next turn, which then reads only the messages added since: 32 MB for all chats, counted as the messages' text and about 256 bytes each beside it, the least recently used leaving first"},
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
	{Name: "APPS_ORIGIN", Default: "", Help: "a second origin of `HTTP_LISTEN`, another host name (or port) than `PUBLIC_URL`'s, where the pages of MCP Apps are served apart from the bot's own: `https://apps.example.com`, which all servers' apps share, each in an opaque origin of its own inside it, or a wildcard, `https://*.apps.example.com`, of which each server's apps get a subdomain, and that origin (see [MCP Apps](mcp.md#mcp-apps)); empty: the pages are served under `PUBLIC_URL`, each in an opaque origin"},
	{Name: "APPS_PERMISSIONS", Default: "", Help: "comma-separated browser features an MCP App's page may use when it asks for them in its `_meta.ui.permissions`: `camera`, `microphone`, `geolocation`, `clipboardWrite` (see [MCP Apps](mcp.md#mcp-apps)); empty: none, whatever a page asks"},
	{Name: "OAUTH_CLIENT_METADATA_URL", Default: "", Help: "the client id mcpgram gives authorization servers that take a Client ID Metadata Document: an `https://` URL that serves it (see [Protected remote servers](mcp.md#protected-remote-servers-signing-in)); empty: `PUBLIC_URL/oauth/client-metadata.json` when `PUBLIC_URL` is set"},
}
