package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/suggest"
)

// EnvProfile is the name of the profile the OPENAI_*, LLM_*,
// MAX_CONTEXT_TOKENS and MODEL_VISION settings make: the default unless
// DEFAULT_MODEL names a profile of models:.
const EnvProfile = "default"

// profileFields are the keys of one profile under models:.
var profileFields = []string{"base_url", "api_key_env", "model", "temperature", "max_tokens", "context_tokens", "tool_calling", "tool_search", "vision", "prompt"}

// profileName is what a profile may be called: it travels in a button's
// callback data (64 bytes at most) and is shown on the button.
var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,31}$`)

// envName is the syntax of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// A rawProfile is one entry of models: as written.
type rawProfile struct {
	name   string
	line   int
	fields map[string]string
}

// readModels reads the models: section of a YAML config file, in the
// order written. viper would fold the names' case and lose their order
// and lines, which the messages and the buttons need.
func readModels(file string) ([]rawProfile, error) {
	if ext := strings.ToLower(filepath.Ext(file)); ext != ".yaml" && ext != ".yml" {
		return nil, fmt.Errorf("%s: models: is read from a YAML file only (mcpgram.yaml)", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read config file %s: %w", file, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	root := doc.Content[0]
	var models *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strings.EqualFold(root.Content[i].Value, "models") {
			models = root.Content[i+1]
		}
	}
	if models == nil || models.Tag == "!!null" {
		return nil, nil
	}
	if models.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: models: want a map of profile names to their settings", file, models.Line)
	}
	var out []rawProfile
	var errs []error
	for i := 0; i+1 < len(models.Content); i += 2 {
		k, v := models.Content[i], models.Content[i+1]
		p := rawProfile{name: k.Value, line: k.Line, fields: map[string]string{}}
		if v.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("%s:%d: models.%s: want the profile's settings (base_url, api_key_env, model, ...)", file, k.Line, k.Value))
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := strings.ToLower(v.Content[j].Value), v.Content[j+1]
			if !slices.Contains(profileFields, fk) {
				msg := fmt.Sprintf("%s:%d: models.%s: unknown field %q", file, v.Content[j].Line, k.Value, v.Content[j].Value)
				if best, ok := suggest.Closest(fk, profileFields); ok {
					msg += fmt.Sprintf(" (did you mean %q?)", best)
				}
				errs = append(errs, errors.New(msg))
				continue
			}
			if fv.Kind != yaml.ScalarNode {
				errs = append(errs, fmt.Errorf("%s:%d: models.%s.%s: want a single value", file, fv.Line, k.Value, fk))
				continue
			}
			p.fields[fk] = strings.TrimSpace(fv.Value)
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// profiles builds the configuration's profiles: the one the environment
// makes, then those of models: in the order written, and checks them and
// DEFAULT_MODEL. The environment's profile is left out when another is
// the default and OPENAI_API_KEY is unset: it was not meant to be used.
func (c *Config) profiles(file string, raws []rawProfile) error {
	env := mcpgram.Profile{
		Name: EnvProfile, BaseURL: c.OpenAIBaseURL, APIKeyEnv: "OPENAI_API_KEY", APIKey: c.OpenAIKey,
		Model: c.Model, Temperature: c.Temperature, MaxTokens: c.MaxTokens, ContextTokens: c.MaxContextTokens,
		ToolCalling: c.ToolCalling, ToolSearch: c.ToolSearch, Vision: c.Vision, Prompt: string(mcpgram.PromptGeneric),
	}
	c.DefaultProfile = cmpOr(c.values["DEFAULT_MODEL"], EnvProfile)
	if c.DefaultProfile == EnvProfile || c.OpenAIKey != "" {
		c.Profiles = append(c.Profiles, env)
	}
	var errs []error
	seen := map[string]int{}
	for _, r := range raws {
		where := fmt.Sprintf("%s:%d: models.%s", file, r.line, r.name)
		switch {
		case r.name == EnvProfile:
			errs = append(errs, fmt.Errorf("%s: the name %q is the profile the OPENAI_* settings make; choose another", where, EnvProfile))
			continue
		case !profileName.MatchString(r.name):
			errs = append(errs, fmt.Errorf("%s: a profile's name goes on a button: want 1 to 32 of a-z 0-9 . _ - (starting with a letter or digit), got %q", where, r.name))
			continue
		}
		if line, dup := seen[r.name]; dup {
			errs = append(errs, fmt.Errorf("%s: the name is taken by the profile at line %d", where, line))
			continue
		}
		seen[r.name] = r.line
		p, err := c.profile(where, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Profiles = append(c.Profiles, p)
	}
	if len(errs) == 0 && !slices.ContainsFunc(c.Profiles, func(p mcpgram.Profile) bool { return p.Name == c.DefaultProfile }) {
		var names []string
		for _, r := range raws {
			names = append(names, r.name)
		}
		msg := fmt.Sprintf("DEFAULT_MODEL: no profile named %q under models:", c.DefaultProfile)
		if best, ok := suggest.Closest(c.DefaultProfile, names); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// profile checks one entry of models:; where names it in errors.
func (c *Config) profile(where string, r rawProfile) (mcpgram.Profile, error) {
	f := r.fields
	get := func(k, def string) string { return cmpOr(f[k], def) }
	p := mcpgram.Profile{
		Name: r.name, BaseURL: strings.TrimRight(f["base_url"], "/"), APIKeyEnv: f["api_key_env"], Model: f["model"],
		ToolCalling: mcpgram.ToolCalling(strings.ToLower(get("tool_calling", string(mcpgram.ToolCallingXML)))), Prompt: strings.ToLower(get("prompt", string(mcpgram.PromptGeneric))),
		ToolSearch: mcpgram.ToolSearch(get("tool_search", string(c.ToolSearch))),
	}
	var errs []error
	bad := func(field, want string) {
		errs = append(errs, fmt.Errorf("%s.%s: want %s, got %q", where, field, want, f[field]))
	}
	if !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
		bad("base_url", "an http:// or https:// URL")
	}
	if p.Model == "" {
		errs = append(errs, fmt.Errorf("%s.model: is not set (the model's name as the endpoint knows it)", where))
	}
	if !envName.MatchString(p.APIKeyEnv) {
		bad("api_key_env", "the name of the environment variable that holds the key (the key itself never goes in mcpgram.yaml), such as FAST_API_KEY")
	} else if key, err := c.lookupKey(where, p.APIKeyEnv); err != nil {
		errs = append(errs, err)
	} else {
		p.APIKey = key
	}
	if t, err := strconv.ParseFloat(get("temperature", "0.2"), 32); err != nil || t < 0 || t > 2 {
		bad("temperature", "a number from 0 to 2")
	} else {
		p.Temperature = float32(t)
	}
	if n, err := strconv.Atoi(get("max_tokens", "4096")); err != nil || n < 0 {
		bad("max_tokens", "a whole number of at least 0")
	} else {
		p.MaxTokens = n
	}
	if n, err := strconv.Atoi(get("context_tokens", "32000")); err != nil || n < 1000 {
		bad("context_tokens", "a whole number of at least 1000")
	} else {
		p.ContextTokens = n
	}
	if v, err := strconv.ParseBool(get("vision", "false")); err != nil {
		bad("vision", "true or false")
	} else {
		p.Vision = v
	}
	if !p.ToolCalling.Valid() {
		var ms []string
		for _, m := range mcpgram.ToolCallingModes() {
			ms = append(ms, string(m))
		}
		bad("tool_calling", strings.Join(ms, ", ")+" or nothing (xml)")
	}
	if err := p.ToolSearch.Check(); err != nil {
		errs = append(errs, fmt.Errorf("%s.tool_search: %w", where, err))
	}
	if !mcpgram.PromptVariant(p.Prompt).Valid() {
		var vs []string
		for _, v := range mcpgram.PromptVariants() {
			vs = append(vs, string(v))
		}
		bad("prompt", strings.Join(vs, ", ")+" or nothing (generic)")
	}
	return p, errors.Join(errs...)
}

// lookupKey reads a profile's key from its variable: the environment,
// .env, or the file NAME_FILE names.
func (c *Config) lookupKey(where, name string) (string, error) {
	if key, _ := c.LookupEnv(name); strings.TrimSpace(key) != "" {
		return strings.TrimSpace(key), nil
	}
	getenv := c.getenv
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	key, file, err := secretFromFile(name, c.dotenv, getenv)
	if err != nil {
		return "", fmt.Errorf("%s.api_key_env: %w", where, err)
	}
	if file != "" {
		c.secretFiles = append(c.secretFiles, file)
	}
	return key, nil
}

// missingKeys names the key variable of each profile whose key is unset.
func (c *Config) missingKeys() []*MissingError {
	var errs []*MissingError
	for _, p := range c.Profiles {
		switch {
		case p.APIKey != "":
		case p.Name == EnvProfile:
			errs = append(errs, &MissingError{Name: "OPENAI_API_KEY", Hint: "set the API key of your OpenAI-compatible endpoint (any value for a local one such as Ollama)"})
		default:
			errs = append(errs, &MissingError{Name: p.APIKeyEnv, Hint: fmt.Sprintf("models.%s.api_key_env names it: set the key of %s there (any value for a local endpoint)", p.Name, p.BaseURL)})
		}
	}
	return errs
}

// Profile returns the profile called name.
func (c *Config) Profile(name string) (mcpgram.Profile, bool) {
	i := slices.IndexFunc(c.Profiles, func(p mcpgram.Profile) bool { return p.Name == name })
	if i < 0 {
		return mcpgram.Profile{}, false
	}
	return c.Profiles[i], true
}
