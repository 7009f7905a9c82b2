// Arguments written in another form than a JSON object: XML elements, as
// the rest of the call is written, or "key: value" lines. Each value is
// typed by the tool's input schema, so that "3" is a number only where the
// tool wants one; a value the schema does not type plainly is not guessed.

package toolcall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// errNotConvertible stands for every reason a form cannot be converted;
// the caller then reports the arguments' original JSON error.
var errNotConvertible = errors.New("arguments not convertible")

// formArguments converts raw, written as XML elements (<key>value</key>,
// or the function form's <parameter=key>value</parameter>) or "key:
// value" lines, into arguments by the types of schema. It returns the kind of
// repair, or errNotConvertible.
func formArguments(raw string, schema json.RawMessage) (map[string]any, string, error) {
	var pairs [][2]string
	kind := RepairArgsXML
	var ok bool
	switch {
	case strings.HasPrefix(raw, parameterOpen):
		// The function form's own way to write arguments: raw values.
		pairs, ok = parameterPairs(raw)
	case strings.HasPrefix(raw, "<"):
		pairs, ok = xmlPairs(raw)
	default:
		kind = RepairArgsLines
		pairs, ok = linePairs(raw)
	}
	if !ok || len(pairs) == 0 {
		return nil, "", errNotConvertible
	}
	types, err := propertyTypes(schema)
	if err != nil {
		return nil, "", errNotConvertible
	}
	args := make(map[string]any, len(pairs))
	for _, p := range pairs {
		key, value := p[0], p[1]
		if _, dup := args[key]; dup {
			return nil, "", errNotConvertible // two values for one key: which was meant?
		}
		if kind == RepairArgsLines && quoted(value) {
			// "a" in YAML is a, but a search query may mean the quotes.
			return nil, "", errNotConvertible
		}
		v, ok := typed(value, types[key])
		if !ok {
			return nil, "", notTyped(key, value, types)
		}
		args[key] = v
	}
	return args, kind, nil
}

// notTyped says why value cannot be key's, for a model that wrote the
// function form (the other forms' callers report the JSON error).
func notTyped(key, value string, types map[string]string) error {
	typ, known := types[key]
	switch {
	case !known:
		return fmt.Errorf("%w: the tool's input schema has no property %q", errNotConvertible, key)
	case typ == "" || typ == "-":
		return fmt.Errorf("%w: the tool's input schema gives %q no single type, so its value cannot be read from text; write the arguments as one JSON object", errNotConvertible, key)
	}
	if len(value) > 40 {
		value = strings.ToValidUTF8(value[:40], "") + "…"
	}
	return fmt.Errorf("%w: %q for %q is not a JSON %s", errNotConvertible, value, key, typ)
}

// xmlPairs reads <key>value</key> elements separated by space. A value
// with an XML entity is refused: whether &amp; meant & cannot be told.
func xmlPairs(raw string) ([][2]string, bool) {
	var out [][2]string
	for rest := strings.TrimSpace(raw); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] != '<' {
			return nil, false
		}
		end := strings.IndexByte(rest, '>')
		if end < 0 || !isKey(rest[1:end]) {
			return nil, false
		}
		key := rest[1:end]
		rest = rest[end+1:]
		stop := strings.Index(rest, "</"+key+">")
		if stop < 0 {
			return nil, false
		}
		value := rest[:stop]
		if strings.Contains(value, "<"+key+">") || hasEntity(value) {
			return nil, false
		}
		out = append(out, [2]string{key, strings.TrimSpace(value)})
		rest = rest[stop+len(key)+3:]
	}
	return out, true
}

// linePairs reads "key: value" lines; any other non-blank line refuses
// the whole, since a value may not span lines.
func linePairs(raw string) ([][2]string, bool) {
	var out [][2]string
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || !isKey(key) || value == "" {
			return nil, false
		}
		out = append(out, [2]string{key, value})
	}
	return out, true
}

// isKey reports whether s is a plain property name: a letter or '_',
// then letters, digits, '_' and '-'.
func isKey(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c == '-' || c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func hasEntity(s string) bool {
	for _, e := range []string{"&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#"} {
		if strings.Contains(s, e) {
			return true
		}
	}
	return false
}

func quoted(s string) bool {
	return len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'')
}

// propertyTypes returns the one JSON type of each top-level property of
// schema that declares one; "" for a property with none, several or only
// "null".
func propertyTypes(schema json.RawMessage) (map[string]string, error) {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("read input schema: %w", err)
	}
	out := make(map[string]string, len(s.Properties))
	for name, p := range s.Properties {
		var one string
		if json.Unmarshal(p.Type, &one) == nil {
			out[name] = one
			continue
		}
		var several []string
		if json.Unmarshal(p.Type, &several) != nil {
			continue
		}
		for _, t := range several {
			switch {
			case t == "null":
			case out[name] == "":
				out[name] = t
			default:
				out[name] = "-" // two types: "5" could be either
			}
		}
	}
	return out, nil
}

// typed converts value to the JSON type typ. Strings stay strings; a
// value that is not plainly of the type, or a type that is not known,
// is refused.
func typed(value, typ string) (any, bool) {
	if typ == "string" {
		return value, true
	}
	value = strings.TrimSpace(value)
	switch typ {
	case "integer":
		if _, err := strconv.ParseInt(value, 10, 64); err != nil || !json.Valid([]byte(value)) {
			return nil, false
		}
		return json.Number(value), true
	case "number":
		if !json.Valid([]byte(value)) {
			return nil, false
		}
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return nil, false
		}
		return json.Number(value), true
	case "boolean":
		switch strings.ToLower(value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	case "array", "object":
		dec := json.NewDecoder(strings.NewReader(value))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return nil, false
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, false
		}
		if _, isArray := v.([]any); isArray == (typ == "array") {
			if _, isObject := v.(map[string]any); isObject == (typ == "object") {
				return v, true
			}
		}
	}
	return nil, false
}
