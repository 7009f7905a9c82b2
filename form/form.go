// Package form asks for the fields of a flat JSON Schema object one at a
// time, the way a chat does: a choice or a yes/no is a press, a text or a
// number is typed and checked against the schema, a default is taken with
// one press. It is what a front end needs to ask an MCP server's
// elicitation (and a prompt's arguments): Parse reads the schema into a
// Form, a State records the answers so far (plain JSON, for a store), and
// the Form's methods move the State on. It knows nothing of Telegram or
// terminals, and keeps no state of its own.
package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Bounds on what a schema may ask, so that a hostile one cannot make a
// form no one can fill in, or a card no chat can show.
const (
	MaxFields  = 50
	MaxOptions = 100
	// maxTitle, maxDescription and maxLabel cut the texts a field shows.
	maxTitle       = 100
	maxDescription = 300
	maxLabel       = 64
	maxPattern     = 1000
)

// ErrTooManyFields is returned by Parse for a schema of more than
// MaxFields fields.
var ErrTooManyFields = fmt.Errorf("form: more than %d fields", MaxFields)

// A Kind is what a field holds, and so how it is asked.
type Kind string

// The kinds of field.
const (
	Text    Kind = "text"    // typed; a string
	Number  Kind = "number"  // typed; a float64
	Integer Kind = "integer" // typed; a whole number, as int64
	Boolean Kind = "boolean" // pressed: Yes or No
	Choice  Kind = "choice"  // pressed: one of Options; its Value
	Choices Kind = "choices" // pressed on and off: some of Options; their Values
)

// Typed reports whether a field of kind k is answered by typing.
func (k Kind) Typed() bool { return k == Text || k == Number || k == Integer }

// An Option is one value of a choice: what is sent, and what is shown.
type Option struct {
	Value string
	Label string
}

// A Field is one property of the schema.
type Field struct {
	Name        string
	Title       string // "" : none; Label falls back to Name
	Description string
	Kind        Kind
	Required    bool
	Options     []Option // Choice, Choices; Boolean: Yes, No
	// Default is the schema's default, when valid for the field: string,
	// float64, int64, bool or []string by Kind; nil when none.
	Default any

	MinLength, MaxLength int // Text; -1: no bound
	Minimum, Maximum     *float64
	MinItems, MaxItems   int // Choices; -1: no bound
	Format               string
	pattern              *regexp.Regexp
}

// Label is what the field is called before the user.
func (f Field) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// A Form is the fields of a schema, in the schema's order.
type Form struct {
	Fields []Field
}

// Parse reads a requested schema: an object whose properties are strings
// (with format, length or pattern), numbers, integers, booleans, enums
// (enum, oneOf or anyOf of const and title) or arrays of enums. Anything
// else (nested objects, more than MaxFields fields) is an error saying
// which field and why.
func Parse(schema json.RawMessage) (*Form, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("form: schema: %w", err)
	}
	if top.Type != "object" && top.Type != "" {
		return nil, fmt.Errorf("form: schema of type %q, not an object", top.Type)
	}
	props, err := orderedObject(top.Properties)
	if errors.Is(err, ErrTooManyFields) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("form: properties: %w", err)
	}
	f := &Form{}
	seen := map[string]bool{}
	for _, p := range props {
		if seen[p.key] {
			return nil, fmt.Errorf("form: field %q given twice", p.key)
		}
		seen[p.key] = true
		field, err := parseField(p.key, p.value)
		if err != nil {
			return nil, fmt.Errorf("form: field %q: %w", p.key, err)
		}
		for _, r := range top.Required {
			if r == p.key {
				field.Required = true
			}
		}
		f.Fields = append(f.Fields, field)
	}
	return f, nil
}

// A property is one key of a JSON object, in order.
type property struct {
	key   string
	value json.RawMessage
}

// orderedObject reads a JSON object's members in the order written: the
// order a server lists its fields in is the order to ask them.
func orderedObject(raw json.RawMessage) ([]property, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []property
	n := 0
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		if n++; n > MaxFields {
			continue // counted, to say how many there are
		}
		out = append(out, property{key: key, value: v})
	}
	if n > MaxFields {
		return nil, fmt.Errorf("%w (%d)", ErrTooManyFields, n)
	}
	return out, nil
}

// wireField is a property's schema as far as a form reads it.
type wireField struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []wireConst     `json:"oneOf"`
	AnyOf       []wireConst     `json:"anyOf"`
	Items       *wireField      `json:"items"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Pattern     string          `json:"pattern"`
	Format      string          `json:"format"`
}

type wireConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

func parseField(name string, raw json.RawMessage) (Field, error) {
	var w wireField
	if err := json.Unmarshal(raw, &w); err != nil {
		return Field{}, err
	}
	f := Field{
		Name: name, Title: cut(w.Title, maxTitle), Description: cut(w.Description, maxDescription),
		MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1,
		Minimum: w.Minimum, Maximum: w.Maximum, Format: w.Format,
	}
	if err := f.setKind(w); err != nil {
		return Field{}, err
	}
	if f.Kind == Text {
		f.MinLength, f.MaxLength = bound(w.MinLength), bound(w.MaxLength)
		// A pattern Go cannot read (or a huge one) is not checked here; the
		// server checks what it gets anyway.
		if w.Pattern != "" && len(w.Pattern) <= maxPattern {
			f.pattern, _ = regexp.Compile(w.Pattern)
		}
	}
	if f.Kind == Choices {
		f.MinItems, f.MaxItems = bound(w.MinItems), bound(w.MaxItems)
	}
	if len(w.Default) > 0 && string(w.Default) != "null" {
		if v, err := f.fromJSON(w.Default); err == nil && f.Check(v) == nil {
			f.Default = v
		}
	}
	return f, nil
}

func bound(p *int) int {
	if p == nil || *p < 0 {
		return -1
	}
	return *p
}

// setKind reads what the field holds.
func (f *Field) setKind(w wireField) error {
	switch {
	case w.Type == "array":
		if w.Items == nil {
			return errors.New("an array without items")
		}
		opts, err := options(*w.Items)
		if err != nil || len(opts) == 0 {
			return errors.New("an array of other than enum values")
		}
		f.Kind, f.Options = Choices, opts
	case len(w.Enum) > 0 || len(w.OneOf) > 0 || len(w.AnyOf) > 0:
		opts, err := options(w)
		if err != nil {
			return err
		}
		f.Kind, f.Options = Choice, opts
	case w.Type == "string":
		f.Kind = Text
	case w.Type == "number":
		f.Kind = Number
	case w.Type == "integer":
		f.Kind = Integer
	case w.Type == "boolean":
		f.Kind, f.Options = Boolean, []Option{{Value: "true", Label: "Yes"}, {Value: "false", Label: "No"}}
	default:
		return fmt.Errorf("of type %q, not one a form asks", w.Type)
	}
	return nil
}

// options reads the values of an enum: enum (with enumNames), or oneOf or
// anyOf of const and title. Values are strings, as the schema allows.
func options(w wireField) ([]Option, error) {
	var out []Option
	add := func(v any, label string) error {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("an enum value %v that is not a string", v)
		}
		if label == "" {
			label = s
		}
		out = append(out, Option{Value: s, Label: cut(label, maxLabel)})
		return nil
	}
	for i, v := range w.Enum {
		label := ""
		if i < len(w.EnumNames) {
			label = w.EnumNames[i]
		}
		if err := add(v, label); err != nil {
			return nil, err
		}
	}
	for _, c := range append(w.OneOf, w.AnyOf...) {
		if err := add(c.Const, c.Title); err != nil {
			return nil, err
		}
	}
	if len(out) > MaxOptions {
		return nil, fmt.Errorf("more than %d options", MaxOptions)
	}
	seen := map[string]bool{}
	for _, o := range out {
		if seen[o.Value] {
			return nil, fmt.Errorf("option %q given twice", o.Value)
		}
		seen[o.Value] = true
	}
	return out, nil
}

// cut bounds s to n runes, on one line.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
