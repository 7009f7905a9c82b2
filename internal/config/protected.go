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

// Protected lists, as absolute paths, the files of the bot that no MCP
// server may see: in files, the settings file (it may expand secrets),
// mcpgram.yaml, the .env file and the files NAME_FILE settings named; in
// data, the SQLite database and the files SQLite keeps beside it, which
// the bot changes in place rather than replacing. Whether they exist is
// for the caller to check.
func (c *Config) Protected() (files, data []string) {
	add := func(list *[]string, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	for _, p := range append([]string{c.MCPSettings, c.File, c.envFile}, c.secretFiles...) {
		add(&files, p)
	}
	if c.DatabasePath != "" {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			add(&data, c.DatabasePath+suffix)
		}
	}
	return files, data
}
