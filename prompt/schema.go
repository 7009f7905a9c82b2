package prompt

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpgram/mcpgram"
)

// A tool's input schema is written in one of two forms. The terse form
// lists the keys of the arguments object one a line:
//
//	- key (type, required, keyword value, ...): description
//
// with the keys of a nested object (or of an array's objects) indented
// under it. It reads as what the model must write and, beyond the names
// and descriptions every form holds, costs about half of compact JSON and
// a quarter of Cline's pretty-printed JSON (see TestPromptSize). A schema the terse form cannot say whole (unions beyond
// plain types, $ref, tuples, typed additionalProperties, a title that is
// more than the key's name…) is written as compact JSON Schema instead,
// so nothing the model needs is ever lost. Both forms first drop the keys
// that carry nothing (see clean).

// keywords are the JSON Schema keywords the terse form writes as
// "keyword value", in this order, after the type and the required marker.
var keywords = []string{
	"enum", "const", "format", "pattern",
	"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "deprecated", "examples", "default",
}

// writeInput writes what a tool takes, under its description line.
func writeInput(b *strings.Builder, t mcpgram.Tool) {
	s, ok := decodeSchema(t.InputSchema)
	if !ok {
		b.WriteString("    Input schema: ")
		b.WriteString(oneLine(string(t.InputSchema)))
		b.WriteString("\n")
		return
	}
	clean(s, t.Name, true)
	var args strings.Builder
	if writeArguments(&args, s) {
		if args.Len() > 0 {
			b.WriteString("    Arguments:\n")
			b.WriteString(args.String())
		}
		return
	}
	b.WriteString("    Input schema: ")
	b.WriteString(encode(s))
	b.WriteString("\n")
}

func decodeSchema(raw json.RawMessage) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil || s == nil {
		return nil, false
	}
	return s, true
}

// clean drops, in place, the keys of schema s (named name: a property's
// key, a definition's name or the tool's name at the top) that tell the
// model nothing: "$schema"; "$comment", which JSON Schema keeps for the
// schema's authors; the top level's "type":"object", which the
// arguments always are; empty "required" and "properties";
// additionalProperties given as a boolean (the model writes the listed
// keys either way); a title that only repeats the name; a null default.
func clean(s map[string]any, name string, top bool) {
	if top {
		delete(s, "$schema")
		if s["type"] == "object" {
			delete(s, "type")
		}
	}
	delete(s, "$comment")
	if t, ok := s["title"].(string); ok && repeats(t, name, top) {
		delete(s, "title")
	}
	if d, ok := s["default"]; ok && d == nil {
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
	for _, key := range []string{"properties", "$defs", "definitions", "patternProperties"} {
		if m, ok := s[key].(map[string]any); ok {
			for k, v := range m {
				if sub, ok := v.(map[string]any); ok {
					clean(sub, k, false)
				}
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not", "if", "then", "else", "anyOf", "oneOf", "allOf", "prefixItems"} {
		switch v := s[key].(type) {
		case map[string]any:
			clean(v, "", false)
		case []any:
			for _, e := range v {
				if sub, ok := e.(map[string]any); ok {
					clean(sub, "", false)
				}
			}
		}
	}
}

// repeats reports whether title says no more than name: the same letters
// and digits, whatever the case and separators ("Max Results" for
// max_results). At the top, generators also append "Arguments" or "Input"
// to the tool's name.
func repeats(title, name string, top bool) bool {
	t, n := letters(title), letters(name)
	if t == n {
		return true
	}
	if top && n != "" {
		if rest, ok := strings.CutPrefix(t, n); ok {
			return slices.Contains([]string{"arguments", "args", "input", "params", "parameters", "request"}, rest)
		}
	}
	return false
}

func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// writeArguments writes the terse form of a cleaned top-level schema, or
// reports false, having written something or not, when the terse form
// would lose part of it.
func writeArguments(b *strings.Builder, s map[string]any) bool {
	for k := range s {
		if k != "properties" && k != "required" {
			return false
		}
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := s["properties"]; ok && props == nil {
		return false
	}
	return writeProperties(b, props, s["required"], "    ")
}

// writeProperties writes one line per property, sorted by key so that the
// bytes do not depend on the order a server happens to list them in.
func writeProperties(b *strings.Builder, props map[string]any, required any, indent string) bool {
	req := map[string]bool{}
	if required != nil {
		list, ok := required.([]any)
		if !ok {
			return false
		}
		for _, r := range list {
			name, ok := r.(string)
			if _, listed := props[name]; !ok || !listed {
				return false // a required key the terse form has no line for
			}
			req[name] = true
		}
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, ok := props[name].(map[string]any)
		if !ok || !writeProperty(b, name, p, req[name], indent) {
			return false
		}
	}
	return true
}

// writeProperty writes the line of one property and those of its own
// properties, or reports false if the terse form cannot say all of p.
func writeProperty(b *strings.Builder, name string, p map[string]any, required bool, indent string) bool {
	attrs, ok := attributes(p, required)
	if !ok {
		return false
	}
	nested, nestedRequired, ok := objectKeys(p)
	if !ok {
		return false
	}
	if items, isMap := p["items"].(map[string]any); isMap {
		if nested != nil || nestedRequired != nil || !sayableItems(items) {
			return false // keys of both the array and its objects, or items unsaid
		}
		attrs = appendKeywords(attrs, "items ", items)
		if nested, nestedRequired, ok = objectKeys(items); !ok {
			return false
		}
	}
	b.WriteString(indent)
	b.WriteString("- ")
	b.WriteString(key(name))
	if len(attrs) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(attrs, ", "))
		b.WriteString(")")
	}
	switch d := p["description"].(type) {
	case nil:
	case string:
		// A description's line breaks are mostly wrapping; kept, they would
		// start lines that read as keys.
		if d = oneLine(d); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	default:
		return false
	}
	b.WriteString("\n")
	if nested == nil {
		return nestedRequired == nil
	}
	return writeProperties(b, nested, nestedRequired, indent+"  ")
}

// attributes returns what goes in brackets after a property's key: its
// type, the required marker and its keywords; false if p holds a key the
// line cannot say.
func attributes(p map[string]any, required bool) ([]string, bool) {
	for k := range p {
		switch k {
		case "type", "anyOf", "items", "properties", "required", "description":
		default:
			if !slices.Contains(keywords, k) {
				return nil, false
			}
		}
	}
	typ, ok := typeOf(p)
	if !ok {
		return nil, false
	}
	var attrs []string
	if typ != "" {
		attrs = append(attrs, typ)
	}
	if required {
		attrs = append(attrs, "required")
	}
	return appendKeywords(attrs, "", p), true
}

// sayableItems reports whether the terse form can say all of an array's
// items: a type, keywords written as "items keyword value", and the keys
// of objects; not a description, a default or an inner array's keywords.
func sayableItems(items map[string]any) bool {
	for k, v := range items {
		switch k {
		case "type", "anyOf", "properties", "required":
		case "items":
			if !plain(v) {
				return false
			}
		case "default", "examples", "deprecated":
			return false
		default:
			if !slices.Contains(keywords, k) {
				return false
			}
		}
	}
	return true
}

// appendKeywords appends "keyword value" for each keyword of s, values as
// JSON so that the model copies them exactly; an enum's values are
// separated by " | ".
func appendKeywords(attrs []string, prefix string, s map[string]any) []string {
	for _, k := range keywords {
		v, ok := s[k]
		if !ok {
			continue
		}
		text := encode(v)
		if list, ok := v.([]any); ok && k == "enum" {
			vals := make([]string, len(list))
			for i, e := range list {
				vals[i] = encode(e)
			}
			text = strings.Join(vals, " | ")
		}
		attrs = append(attrs, prefix+k+" "+text)
	}
	return attrs
}

// typeOf returns the type a property's line shows: "string", "string or
// null", "array of object"…; "" when the schema names none. It reports
// false for a type the terse form cannot say: a union beyond plain types,
// or items of an array whose type is not plainly "array".
func typeOf(s map[string]any) (string, bool) {
	t, hasType := s["type"]
	union, hasUnion := s["anyOf"]
	items, hasItems := s["items"]
	switch {
	case hasType && hasUnion:
		return "", false
	case hasUnion:
		if hasItems {
			return "", false
		}
		return plainUnion(union)
	case !hasType:
		return "", !hasItems
	}
	switch t := t.(type) {
	case string:
		if !hasItems {
			return t, true
		}
		im, ok := items.(map[string]any)
		if t != "array" || !ok {
			return "", false
		}
		of, ok := typeOf(im)
		if !ok {
			return "", false
		}
		if of == "" {
			return "array", true
		}
		return "array of " + of, true
	case []any:
		if hasItems {
			return "", false
		}
		return plainUnion(mapSlice(t, func(v any) any { return map[string]any{"type": v} }))
	}
	return "", false
}

// plainUnion says a union of plain types ({"type":"string"} and the like,
// as Pydantic writes optional fields) as "string or null".
func plainUnion(v any) (string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return "", false
	}
	names := make([]string, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 1 {
			return "", false
		}
		name, ok := m["type"].(string)
		if !ok || name == "" {
			return "", false
		}
		names[i] = name
	}
	return strings.Join(names, " or "), true
}

// plain reports whether schema s says nothing but a type.
func plain(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch {
		case k == "items" && plain(v):
		case k == "type" || k == "anyOf":
		default:
			return false
		}
	}
	_, ok = typeOf(m)
	return ok
}

// objectKeys returns the properties and required keys of s, reporting
// false if properties is not an object.
func objectKeys(s map[string]any) (props map[string]any, required any, ok bool) {
	v, has := s["properties"]
	props, ok = v.(map[string]any)
	return props, s["required"], ok || !has
}

func mapSlice(list []any, f func(any) any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = f(v)
	}
	return out
}

// key writes a property's key bare when it is a plain word, else as a JSON
// string, so that a key with spaces or brackets stays exact.
func key(name string) string {
	plain := name != ""
	for _, r := range name {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.$@/", r)) {
			plain = false
		}
	}
	if plain {
		return name
	}
	return encode(name)
}

// encode writes v as compact JSON with sorted keys and numbers as the
// server wrote them.
func encode(v any) string {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	// JSON escapes every line break but NEL, which is no control
	// character to it; escaped, it is the same value (see lineBreaks).
	return strings.ReplaceAll(strings.TrimSuffix(out.String(), "\n"), "\u0085", `\u0085`)
}
