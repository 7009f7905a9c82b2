package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"github.com/subosito/gotenv"
)

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
	v, cfgFile, models, err := readFile(fs)
	if err != nil {
		return nil, err
	}
	dotenv, envFile, err := envFileOf(fs)
	if err != nil {
		return nil, err
	}
	values, secretFiles, err := gather(v, dotenv, getenv)
	if err != nil {
		return nil, err
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

// readFile reads the defaults and then mcpgram.yaml (the file --config
// names, else ./mcpgram.yaml if present), and returns them, the file read
// ("" for none) and its model profiles.
func readFile(fs *pflag.FlagSet) (v *viper.Viper, cfgFile string, models []rawProfile, err error) {
	v = viper.New()
	for _, s := range Settings {
		v.SetDefault(key(s.Name), s.Default)
	}
	file := flagString(fs, "config")
	explicit := file != ""
	if !explicit {
		file = "mcpgram.yaml"
	}
	if _, err := os.Stat(file); err != nil {
		if explicit {
			return nil, "", nil, fmt.Errorf("config file %s: %w", file, err)
		}
		return v, "", nil, nil
	}
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		return nil, "", nil, fmt.Errorf("read config file %s: %w", file, err)
	}
	if err := checkKeys(file, v); err != nil {
		return nil, "", nil, err
	}
	for _, s := range Settings {
		if s.Secret && v.InConfig(key(s.Name)) {
			return nil, "", nil, fmt.Errorf("%s: %s is a secret and is read only from the environment, a .env file or %s_FILE, not from %s", key(s.Name), s.Name, s.Name, file)
		}
	}
	if v.InConfig("models") {
		if models, err = readModels(file); err != nil {
			return nil, "", nil, err
		}
	}
	return v, file, models, nil
}

// gather gives each setting its value: the file's (or the default), then
// .env's, then the environment's; a secret not set so, that of the file
// NAME_FILE names. It returns the values and the secret files read.
func gather(v *viper.Viper, dotenv map[string]string, getenv func(string) (string, bool)) (map[string]string, []string, error) {
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
				return nil, nil, err
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
	return values, secretFiles, nil
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
