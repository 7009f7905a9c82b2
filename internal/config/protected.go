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
// server may see: the settings file (it may expand secrets), mcpgram.yaml,
// the .env file, the files NAME_FILE settings named, and the SQLite
// database with the files SQLite keeps beside it. Whether they exist is
// for the caller to check.
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
	add(c.MCPSettings)
	add(c.File)
	add(c.envFile)
	for _, f := range c.secretFiles {
		add(f)
	}
	if c.DatabasePath != "" {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			add(c.DatabasePath + suffix)
		}
	}
	return out
}
