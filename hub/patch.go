package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub/internal/jsonobj"
)

// patchServer rewrites the settings file with one key of one server entry
// changed by patch, which gets the key's current raw value (nil if absent).
// Everything else, unknown fields included, is kept as it was, and so is the
// file's layout: only the bytes of that one value change.
func patchServer(path, server, key string, patch func(old json.RawMessage) (json.RawMessage, error)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	// A byte order mark stays where it was; the JSON after it is patched.
	body := bytes.TrimPrefix(data, bom)
	if err := checkSyntax(path, body); err != nil {
		return err
	}
	out, err := splice(body, server, key, patch)
	if errors.Is(err, jsonobj.ErrLayout) {
		out, err = reencode(body, server, key, patch)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeAtomic(path, append(data[:len(data)-len(body):len(data)-len(body)], out...))
}

func splice(data []byte, server, key string, patch func(json.RawMessage) (json.RawMessage, error)) ([]byte, error) {
	entry, err := entrySpan(data, server)
	if err != nil {
		return nil, err
	}
	fields, closing, err := jsonobj.Spans(data, entry.Start)
	if err != nil {
		return nil, err
	}
	old, found := jsonobj.Last(fields, key)
	value, err := patch(old.Value)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch {
	case found:
		out = slices.Concat(data[:old.Start], value, data[old.End:])
	case len(fields) == 0:
		out = slices.Concat(data[:closing], []byte(strconv.Quote(key)+": "), value, data[closing:])
	default:
		// Lay the new member out like the last one: on its own line with
		// the same indent, or on the same line.
		last := fields[len(fields)-1]
		sep := ", "
		if nl := bytes.LastIndexByte(data[:last.KeyStart], '\n'); nl >= entry.Start {
			indent := data[nl+1 : last.KeyStart]
			if len(bytes.Trim(indent, " \t")) == 0 {
				sep = ",\n" + string(indent)
			}
		}
		out = slices.Concat(data[:last.End], []byte(sep+strconv.Quote(key)+": "), value, data[last.End:])
	}
	if !json.Valid(out) {
		return nil, jsonobj.ErrLayout
	}
	return out, nil
}

// entrySpan finds the entry of server in the file's server lists.
func entrySpan(data []byte, server string) (jsonobj.Span, error) {
	top, _, err := jsonobj.Spans(data, 0)
	if err != nil {
		return jsonobj.Span{}, err
	}
	for _, name := range serverLists {
		list, ok := jsonobj.Last(top, name)
		if !ok || len(list.Value) == 0 || list.Value[0] != '{' {
			continue
		}
		servers, _, err := jsonobj.Spans(data, list.Start)
		if err != nil {
			return jsonobj.Span{}, err
		}
		if entry, ok := jsonobj.Last(servers, server); ok {
			return entry, nil
		}
	}
	return jsonobj.Span{}, fmt.Errorf("no server %q: %w", server, mcpgram.ErrUnknownServer)
}

// reencode is patchServer for files splice cannot follow: it keeps every
// member and their order, but lays the file out anew.
func reencode(data []byte, server, key string, patch func(json.RawMessage) (json.RawMessage, error)) ([]byte, error) {
	top, err := jsonobj.Parse(data)
	if err != nil {
		return nil, err
	}
	var (
		list     string
		servers  []jsonobj.Member
		rawEntry json.RawMessage
	)
	for _, name := range serverLists {
		raw, _ := jsonobj.Get(top, name)
		if servers, err = jsonobj.Parse(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if e, ok := jsonobj.Get(servers, server); ok {
			list, rawEntry = name, e
			break
		}
	}
	if list == "" {
		return nil, fmt.Errorf("no server %q: %w", server, mcpgram.ErrUnknownServer)
	}
	fields, err := jsonobj.Parse(rawEntry)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", server, err)
	}
	old, _ := jsonobj.Get(fields, key)
	value, err := patch(old)
	if err != nil {
		return nil, err
	}
	fields = jsonobj.Set(fields, key, value)
	servers = jsonobj.Set(servers, server, jsonobj.Encode(fields))
	top = jsonobj.Set(top, list, jsonobj.Encode(servers))
	var out bytes.Buffer
	if err := json.Indent(&out, jsonobj.Encode(top), "", "  "); err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// writeAtomic replaces path with data so that a reader (or a crash) sees
// either the old file or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	// Follow a symlink so that the link stays and its target changes.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write settings: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write settings: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	return nil
}

// marshalList encodes names the way people write them: ["a", "b"].
func marshalList(names []string) (json.RawMessage, error) {
	parts := make([]string, len(names))
	for i, n := range names {
		b, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		parts[i] = string(b)
	}
	return json.RawMessage("[" + strings.Join(parts, ", ") + "]"), nil
}
