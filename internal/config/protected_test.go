package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Protected names every path of the bot's that a server must not see, as
// absolute paths: the settings file, mcpgram.yaml, the .env that was
// read and the files NAME_FILE settings named (a profile's key among
// them), the database with its journals, and the media folder.
func TestProtected(t *testing.T) {
	secrets := t.TempDir()
	tokenFile, keyFile := filepath.Join(secrets, "token"), filepath.Join(secrets, "other-key")
	for _, f := range []string{tokenFile, keyFile} {
		if err := os.WriteFile(f, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := load(t, map[string]string{
		"mcpgram.yaml": "models:\n  other:\n    base_url: https://other.example.com/v1\n    api_key_env: OTHER_KEY\n    model: m\n",
		".env":         "DATABASE_PATH=./state/bot.db\n",
	}, map[string]string{"TELEGRAM_BOT_TOKEN_FILE": tokenFile, "OTHER_KEY_FILE": keyFile, "OPENAI_API_KEY": "sk-x", "MCP_SETTINGS": "conf/servers.json"})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	want := []string{
		filepath.Join(wd, "conf", "servers.json"), filepath.Join(wd, "mcpgram.yaml"), filepath.Join(wd, ".env"), tokenFile, keyFile,
		filepath.Join(wd, "state", "bot.db"), filepath.Join(wd, "state", "bot.db-wal"), filepath.Join(wd, "state", "bot.db-shm"), filepath.Join(wd, "state", "bot.db-journal"),
		filepath.Join(wd, "state", "media"),
	}
	got := c.Protected()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Protected() = %q lacks %q", got, w)
		}
	}
	for _, p := range got {
		if !filepath.IsAbs(p) {
			t.Errorf("Protected() holds %q, not absolute", p)
		}
	}
}

// SecretEnv names every secret setting and every profile's key variable:
// what the bot takes out of its environment once read.
func TestSecretEnv(t *testing.T) {
	c, err := load(t, map[string]string{
		"mcpgram.yaml": "models:\n  other:\n    base_url: https://other.example.com/v1\n    api_key_env: OTHER_KEY\n    model: m\n",
	}, map[string]string{"OTHER_KEY": "k", "OPENAI_API_KEY": "sk-x"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.SecretEnv(), " ")
	for _, w := range []string{"TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "OPENAI_API_KEY", "TRANSCRIPTION_API_KEY", "DATABASE_URL", "OTHER_KEY"} {
		if !slices.Contains(c.SecretEnv(), w) {
			t.Errorf("SecretEnv() = %s, lacks %s", got, w)
		}
	}
}
