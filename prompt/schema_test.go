package prompt_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The terse form must lose nothing the model needs: these tests read each
// tool's arguments back out of the prompt, terse or JSON, and compare them
// with the tool's schema less the keys that carry nothing, as this file
// defines them on its own.

// edges are schemas the terse form must either say whole or leave to
// JSON Schema.
var edges = map[string]string{
	"required-unlisted": `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
	"tuple":             `{"type":"object","properties":{"p":{"type":"array","items":[{"type":"number"},{"type":"number"}]}}}`,
	"map":               `{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"}}}}`,
	"boolean-schema":    `{"type":"object","properties":{"any":true}}`,
	"enum-objects":      `{"type":"object","properties":{"o":{"enum":[{"a":1},[1,2],null,"x | y"]}}}`,
	"odd-keys":          `{"type":"object","properties":{"a \"quoted\" key":{"type":"string"},"(x)":{"type":"number"},"":{"type":"string"},"ключ":{"type":"string"}}}`,
	"pattern":           `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+(, [a-z]+)*$","description":"Ids): like this"}}}`,
	"items-described":   `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","description":"one id"}}}}`,
	"items-items":       `{"type":"object","properties":{"l":{"type":"array","items":{"type":"array","minItems":2,"items":{"type":"number","minimum":0}}}}}`,
	"items-union":       `{"type":"object","properties":{"l":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]}}}}`,
	"union-rich":        `{"type":"object","properties":{"u":{"anyOf":[{"type":"string","maxLength":3},{"type":"null"}]}}}`,
	"top-description":   `{"type":"object","description":"Says something","properties":{"a":{"type":"string"}}}`,
	"top-array":         `{"type":"array","items":{"type":"string"}}`,
	"deep":              `{"type":"object","properties":{"a":{"type":"object","required":["b"],"properties":{"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":"integer","exclusiveMinimum":0,"multipleOf":2,"const":4,"examples":[4],"deprecated":true}}}}}}}}`,
	"nested-required":   `{"type":"object","properties":{"a":{"type":"object","required":["x"]}}}`,
	"numbers":           `{"type":"object","properties":{"n":{"type":"number","default":1.50,"maximum":1e3}}}`,
	"description-typed": `{"type":"object","properties":{"a":{"type":"string","description":["not","a","string"]}}}`,
	"empty-description": `{"type":"object","properties":{"a":{"type":"string","description":" "}}}`,
	"title-top-differs": `{"type":"object","title":"Something else","properties":{}}`,
	"comments":          `{"type":"object","$comment":"for us","properties":{"a":{"type":"string","$comment":"for us too"}}}`,
	"multiline":         `{"type":"object","properties":{"a":{"type":"string","description":"One:\n- two\n- three"}}}`,
}

func edgesCatalog() mcpgram.Catalog {
	s := mcpgram.ServerInfo{Name: "edges", Status: mcpgram.StatusRunning}
	for name, schema := range edges {
		s.Tools = append(s.Tools, mcpgram.Tool{Name: name, Description: "Edge.", InputSchema: json.RawMessage(schema)})
	}
	return mcpgram.Catalog{Servers: []mcpgram.ServerInfo{s}}
}

func TestArgumentsLoseNothing(t *testing.T) {
	for name, cat := range map[string]mcpgram.Catalog{"shapes": shapes(), "edges": edgesCatalog(), "servers": catalog(), "memory": withMemory()} {
		t.Run(name, func(t *testing.T) { checkArguments(t, cat) })
	}
}

// TestArgumentsLoseNothingReal does the same for the catalogs of real
// servers.
func TestArgumentsLoseNothingReal(t *testing.T) {
	for _, srv := range sizedServers() {
		t.Run(srv.name, func(t *testing.T) {
			s := srv.start(t)
			path := testenv.WriteSettings(t, t.TempDir(), map[string]any{s.name: map[string]any{"command": s.command, "args": s.args, "env": s.env}})
			h := testenv.StartHub(t, path, hub.Options{NoWatch: true})
			testenv.Running(t, h)
			checkArguments(t, h.Catalog())
		})
	}
}

// TestTerseWhereItCan: the edges the terse form can say are said tersely,
// so the fallback does not quietly swallow everything.
func TestTerseWhereItCan(t *testing.T) {
	p := prompt.Build(edgesCatalog())
	for name := range edges {
		block := toolBlock(t, p, "edges", name)
		terse := !strings.Contains(block, "Input schema: ")
		want := slices.Contains([]string{"enum-objects", "odd-keys", "pattern", "items-union", "deep", "numbers", "empty-description", "multiline", "comments"}, name)
		if terse != want {
			t.Errorf("%s: terse = %v, want %v:\n%s", name, terse, want, block)
		}
	}
}

func checkArguments(t *testing.T, cat mcpgram.Catalog) {
	t.Helper()
	p := prompt.Build(cat)
	n := 0
	for _, s := range cat.Servers {
		if s.Status != mcpgram.StatusRunning {
			continue
		}
		for _, tool := range s.Tools {
			block := toolBlock(t, p, s.Name, tool.Name)
			got, terse, err := readArguments(block)
			if err != nil {
				t.Errorf("%s: %v:\n%s", tool.Name, err, block)
				continue
			}
			want := decode(t, tool.InputSchema)
			normalize(want, tool.Name, true, terse)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back\n%s\nwant\n%s\nfrom:\n%s", tool.Name, show(got), show(want), block)
			}
			n++
		}
	}
	t.Logf("%d tools read back", n)
}

// toolBlock returns the lines of tool of server in p, its own line first.
func toolBlock(t *testing.T, p, server, tool string) string {
	t.Helper()
	_, rest, ok := strings.Cut(p, "\n## "+server+"\n")
	if ok {
		_, rest, ok = strings.Cut(rest, "\n- "+tool+":")
		if !ok {
			_, rest, ok = strings.Cut(rest, "\n- "+tool+"\n")
		}
	}
	if !ok {
		t.Fatalf("no tool %s of %s in the prompt", tool, server)
	}
	var lines []string
	for _, line := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// readArguments reads a tool's block back into a schema: the JSON after
// "Input schema: ", or the terse lines after "Arguments:" (none: {}).
func readArguments(block string) (schema map[string]any, terse bool, err error) {
	lines := strings.Split(block, "\n")
	for i, line := range lines {
		if js, ok := strings.CutPrefix(line, "    Input schema: "); ok {
			if i != len(lines)-1 {
				return nil, false, fmt.Errorf("lines after the input schema")
			}
			var s map[string]any
			dec := json.NewDecoder(strings.NewReader(js))
			dec.UseNumber()
			return s, false, dec.Decode(&s)
		}
		if line == "    Arguments:" {
			s := map[string]any{}
			rest, err := readProperties(s, lines[i+1:], "    ")
			if err == nil && len(rest) > 0 {
				err = fmt.Errorf("unread lines: %q", rest)
			}
			return s, true, err
		}
	}
	return map[string]any{}, true, nil
}

// readProperties reads the lines at indent into parent's properties and
// required, and returns the lines left.
func readProperties(parent map[string]any, lines []string, indent string) ([]string, error) {
	props := map[string]any{}
	var required []any
	for len(lines) > 0 {
		line, ok := strings.CutPrefix(lines[0], indent+"- ")
		if !ok {
			break
		}
		lines = lines[1:]
		name, p, req, err := readProperty(line)
		if err != nil {
			return nil, err
		}
		if req {
			required = append(required, name)
		}
		props[name] = p
		if len(lines) > 0 && strings.HasPrefix(lines[0], indent+"  - ") {
			target := p
			if items, ok := p["items"].(map[string]any); ok {
				target = items
			}
			if lines, err = readProperties(target, lines, indent+"  "); err != nil {
				return nil, err
			}
		}
	}
	if len(props) > 0 {
		parent["properties"] = props
	}
	if required != nil {
		parent["required"] = required
	}
	return lines, nil
}

// readProperty reads "key (attr, attr): description".
func readProperty(line string) (name string, p map[string]any, required bool, err error) {
	p = map[string]any{}
	rest := line
	if strings.HasPrefix(rest, `"`) {
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&name); err != nil {
			return "", nil, false, err
		}
		rest = rest[dec.InputOffset():]
	} else {
		end := strings.IndexAny(rest, " :")
		if end < 0 {
			end = len(rest)
		}
		name, rest = rest[:end], rest[end:]
	}
	if attrs, ok := strings.CutPrefix(rest, " ("); ok {
		if rest, required, err = readAttrs(p, attrs); err != nil {
			return "", nil, false, err
		}
	}
	if d, ok := strings.CutPrefix(rest, ": "); ok {
		p["description"] = d
	} else if rest != "" {
		return "", nil, false, fmt.Errorf("unread %q", rest)
	}
	return name, p, required, nil
}

// readAttrs reads "attr, attr)" into p and returns what follows.
func readAttrs(p map[string]any, s string) (rest string, required bool, err error) {
	for first := true; ; first = false {
		target, word := p, s
		if w, ok := strings.CutPrefix(word, "items "); ok {
			items, _ := p["items"].(map[string]any)
			if items == nil {
				return "", false, fmt.Errorf("items keyword before an array type")
			}
			target, word = items, w
		}
		kw, value, isKeyword := strings.Cut(word, " ")
		switch {
		case strings.HasPrefix(s, "required,") || strings.HasPrefix(s, "required)"):
			required, s = true, s[len("required"):]
		case isKeyword && isJSONSchemaKeyword(kw):
			v, n, err := readValues(value, kw == "enum")
			if err != nil {
				return "", false, fmt.Errorf("%s: %w", kw, err)
			}
			target[kw] = v
			s = value[n:]
		case first:
			end := strings.IndexAny(s, ",)")
			if end < 0 {
				return "", false, fmt.Errorf("unclosed attributes")
			}
			for k, v := range readType(s[:end]) {
				p[k] = v
			}
			s = s[end:]
		default:
			return "", false, fmt.Errorf("unknown attribute in %q", s)
		}
		if r, ok := strings.CutPrefix(s, ")"); ok {
			return r, required, nil
		}
		next, ok := strings.CutPrefix(s, ", ")
		if !ok {
			return "", false, fmt.Errorf("no separator before %q", s)
		}
		s = next
	}
}

func isJSONSchemaKeyword(w string) bool {
	return slices.Contains([]string{"enum", "const", "format", "pattern", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
		"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "deprecated", "examples", "default"}, w)
}

// readValues reads one JSON value from s, or for an enum several
// separated by " | ", and says how many bytes it read.
func readValues(s string, enum bool) (v any, n int, err error) {
	var list []any
	for {
		dec := json.NewDecoder(strings.NewReader(s[n:]))
		dec.UseNumber()
		var e any
		if err := dec.Decode(&e); err != nil {
			return nil, 0, err
		}
		n += int(dec.InputOffset())
		if !enum {
			return e, n, nil
		}
		list = append(list, e)
		if !strings.HasPrefix(s[n:], " | ") {
			return list, n, nil
		}
		n += len(" | ")
	}
}

// readType reads "string", "string or null", "array of object"…
func readType(phrase string) map[string]any {
	if of, ok := strings.CutPrefix(phrase, "array of "); ok {
		return map[string]any{"type": "array", "items": readType(of)}
	}
	if names := strings.Split(phrase, " or "); len(names) > 1 {
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		return map[string]any{"type": list}
	}
	return map[string]any{"type": phrase}
}

// normalize drops from schema s what carries nothing, as this test sees
// it; for the terse form it also writes a union of plain types as a list
// of types and a description's lines as one.
func normalize(s map[string]any, name string, top, terse bool) {
	if top {
		delete(s, "$schema")
		if s["type"] == "object" {
			delete(s, "type")
		}
	}
	delete(s, "$comment")
	if title, ok := s["title"].(string); ok {
		t, n := squash(title), squash(name)
		if t == n || top && (t == n+"arguments" || t == n+"input") {
			delete(s, "title")
		}
	}
	if v, ok := s["default"]; ok && v == nil {
		delete(s, "default")
	}
	if _, ok := s["additionalProperties"].(bool); ok {
		delete(s, "additionalProperties")
	}
	if r, ok := s["required"].([]any); ok && len(r) == 0 {
		delete(s, "required")
	}
	if p, ok := s["properties"].(map[string]any); ok && len(p) == 0 {
		delete(s, "properties")
	}
	if terse {
		if d, ok := s["description"].(string); ok {
			if d = strings.Join(strings.Fields(d), " "); d == "" {
				delete(s, "description")
			} else {
				s["description"] = d
			}
		}
		if union, ok := s["anyOf"].([]any); ok {
			var types []any
			for _, b := range union {
				if m, ok := b.(map[string]any); ok && len(m) == 1 && m["type"] != nil {
					types = append(types, m["type"])
				}
			}
			if len(types) == len(union) {
				delete(s, "anyOf")
				s["type"] = types
			}
		}
		if r, ok := s["required"].([]any); ok {
			slices.SortFunc(r, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
	}
	for k, v := range s {
		switch v := v.(type) {
		case map[string]any:
			if k == "properties" || k == "$defs" || k == "definitions" {
				for name, sub := range v {
					if m, ok := sub.(map[string]any); ok {
						normalize(m, name, false, terse)
					}
				}
			} else if k != "default" && k != "const" {
				normalize(v, "", false, terse)
			}
		case []any:
			if k == "anyOf" || k == "oneOf" || k == "allOf" || k == "items" {
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						normalize(m, "", false, terse)
					}
				}
			}
		}
	}
}

func squash(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s))
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var s map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSchemaBytesDoNotMatter: the prompt depends on what a schema says,
// not on its key order or spacing, and on nothing that varies between
// builds (Go's map order is random on every range).
func TestSchemaBytesDoNotMatter(t *testing.T) {
	for name, cat := range map[string]mcpgram.Catalog{"shapes": shapes(), "edges": edgesCatalog()} {
		t.Run(name, func(t *testing.T) {
			want := prompt.Build(cat)
			for range 20 {
				if got := prompt.Build(cat); got != want {
					t.Fatal("prompt changed between builds")
				}
			}
			for i, tool := range cat.Servers[0].Tools {
				b, err := json.MarshalIndent(decode(t, tool.InputSchema), "", "\t")
				if err != nil {
					t.Fatal(err)
				}
				cat.Servers[0].Tools[i].InputSchema = b
			}
			slices.Reverse(cat.Servers[0].Tools)
			if got := prompt.Build(cat); got != want {
				t.Errorf("prompt changed with the schemas' key order and spacing:\n%s", got)
			}
		})
	}
}
