package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// A sandboxConfig is the "sandbox" field of a stdio server's entry.
type sandboxConfig struct {
	// mode is the entry's own mode; empty: the hub's default.
	mode mcpgram.SandboxMode
	// noNetwork cuts the server off the network.
	noNetwork bool
	// paths and readOnly are folders or files the server may also use,
	// read-write and read-only: absolute, ~ expanded.
	paths, readOnly []string
}

// sandboxEntry is the object form of the field.
type sandboxEntry struct {
	Mode          string   `json:"mode"`
	Network       *bool    `json:"network"`
	Paths         []string `json:"paths"`
	ReadOnlyPaths []string `json:"readOnlyPaths"`
}

// readSandbox reads the "sandbox" field: a mode ("off"), or an object with
// a mode, network, paths and readOnlyPaths. Relative paths are relative to
// dir, the folder the server runs in, as every path of its entry is.
func readSandbox(raw json.RawMessage, dir, home string, expand func(string) (string, error)) (sandboxConfig, error) {
	var sc sandboxConfig
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return sc, nil
	}
	var e sandboxEntry
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &e.Mode); err != nil {
			return sc, fmt.Errorf("sandbox: %w", err)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return sc, fmt.Errorf(`sandbox: want a mode such as "off", or an object with mode, network, paths and readOnlyPaths: %w`, err)
		}
	}
	if e.Mode != "" {
		m, err := mcpgram.ParseSandboxMode(e.Mode)
		if err != nil {
			return sc, fmt.Errorf("sandbox: mode: %w", err)
		}
		sc.mode = m
	}
	sc.noNetwork = e.Network != nil && !*e.Network
	var err error
	if sc.paths, err = sandboxPaths(e.Paths, dir, home, expand); err != nil {
		return sc, fmt.Errorf("sandbox: paths: %w", err)
	}
	if sc.readOnly, err = sandboxPaths(e.ReadOnlyPaths, dir, home, expand); err != nil {
		return sc, fmt.Errorf("sandbox: readOnlyPaths: %w", err)
	}
	return sc, nil
}

func sandboxPaths(in []string, dir, home string, expand func(string) (string, error)) ([]string, error) {
	var out []string
	for _, p := range in {
		p, err := expand(p)
		if err != nil {
			return nil, err
		}
		if p == "" {
			return nil, errors.New("an empty path")
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// key is what of the field decides whether a change needs a restart.
func (sc sandboxConfig) key() []any {
	return []any{sc.mode, sc.noNetwork, sc.paths, sc.readOnly}
}
