package config

import (
	"path/filepath"
	"slices"
)

// SecretEnv names the environment variables whose values are secrets the
// configuration read: the secret settings and every profile's key. Once
// read, the process needs them no more in its environment, from which a
// child or /proc could take them (see package harden).
func (c *Config) SecretEnv() []string {
	var out []string
	for _, s := range Settings {
		if s.Secret {
			out = append(out, s.Name)
		}
	}
	for _, p := range c.Profiles {
		if p.APIKeyEnv != "" && !slices.Contains(out, p.APIKeyEnv) {
			out = append(out, p.APIKeyEnv)
		}
	}
	return out
}

// Protected lists, as absolute paths, the bot's paths that no MCP server
// may see, present or future: the settings file (it may expand secrets),
// mcpgram.yaml, the .env file and the files NAME_FILE settings named; the
// SQLite database, the journals SQLite may create beside it, and the
// media folder beside it. Most need not exist yet: a journal planted
// before SQLite makes one would be played back into the database.
func (c *Config) Protected() []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range append([]string{c.MCPSettings, c.File, c.envFile}, c.secretFiles...) {
		add(p)
	}
	if c.DatabasePath != "" {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			add(c.DatabasePath + suffix)
		}
		add(filepath.Join(filepath.Dir(c.DatabasePath), "media"))
	}
	return out
}
