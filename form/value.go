// Values: a field's value from JSON, from what the user typed, checked
// against the schema, and shown back.

package form

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// An Invalid is an answer the schema refuses: Reason says why, in a plain
// sentence for the user, who may try again.
type Invalid struct {
	Field  string
	Reason string
}

func (e *Invalid) Error() string { return e.Field + ": " + e.Reason }

func (f Field) invalid(format string, args ...any) error {
	return &Invalid{Field: f.Label(), Reason: fmt.Sprintf(format, args...)}
}

// fromJSON reads a JSON value (a default, a stored answer) as the field's
// Go value.
func (f Field) fromJSON(raw json.RawMessage) (any, error) {
	switch f.Kind {
	case Text, Choice:
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case Number:
		var n float64
		err := json.Unmarshal(raw, &n)
		return n, err
	case Integer:
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, err
		}
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return nil, errors.New("not a whole number")
		}
		return int64(n), nil
	case Boolean:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	case Choices:
		var list []string
		err := json.Unmarshal(raw, &list)
		return list, err
	}
	return nil, fmt.Errorf("unknown kind %q", f.Kind)
}

// Check says whether v, of the field's Go type, is a value the schema
// allows; an *Invalid if not.
func (f Field) Check(v any) error {
	switch f.Kind {
	case Text:
		s, ok := v.(string)
		if !ok {
			return f.invalid("not a text")
		}
		return f.checkText(s)
	case Number, Integer:
		var n float64
		switch x := v.(type) {
		case float64:
			n = x
		case int64:
			n = float64(x)
		default:
			return f.invalid("not a number")
		}
		return f.checkNumber(n)
	case Boolean:
		if _, ok := v.(bool); !ok {
			return f.invalid("not yes or no")
		}
	case Choice:
		s, _ := v.(string)
		if f.option(s) < 0 {
			return f.invalid("not one of the choices")
		}
	case Choices:
		list, ok := v.([]string)
		if !ok {
			return f.invalid("not a list of choices")
		}
		return f.checkChoices(list)
	}
	return nil
}

func (f Field) checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case f.MinLength >= 0 && n < f.MinLength:
		return f.invalid("at least %d characters, please (this has %d).", f.MinLength, n)
	case f.MaxLength >= 0 && n > f.MaxLength:
		return f.invalid("at most %d characters, please (this has %d).", f.MaxLength, n)
	case f.pattern != nil && !f.pattern.MatchString(s):
		return f.invalid("that does not have the form asked for (%s).", cut(f.pattern.String(), 80))
	}
	return f.checkFormat(s)
}

func (f Field) checkFormat(s string) error {
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s || !strings.Contains(s, "@") {
			return f.invalid("that is not an email address (like name@example.com).")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return f.invalid("that is not a full address (like https://example.com/page).")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return f.invalid("that is not a date as YYYY-MM-DD (like 2026-12-24).")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return f.invalid("that is not a date and time (like 2026-12-24T18:30:00Z).")
		}
	}
	return nil
}

func (f Field) checkNumber(n float64) error {
	switch {
	case math.IsNaN(n) || math.IsInf(n, 0):
		return f.invalid("not a number.")
	case f.Kind == Integer && n != math.Trunc(n):
		return f.invalid("a whole number, please.")
	case f.Minimum != nil && n < *f.Minimum:
		return f.invalid("at least %s, please.", formatNumber(*f.Minimum))
	case f.Maximum != nil && n > *f.Maximum:
		return f.invalid("at most %s, please.", formatNumber(*f.Maximum))
	}
	return nil
}

func (f Field) checkChoices(list []string) error {
	for _, s := range list {
		if f.option(s) < 0 {
			return f.invalid("%q is not one of the choices.", s)
		}
	}
	switch {
	case f.MinItems >= 0 && len(list) < f.MinItems:
		return f.invalid("choose at least %d.", f.MinItems)
	case f.MaxItems >= 0 && len(list) > f.MaxItems:
		return f.invalid("choose at most %d.", f.MaxItems)
	}
	return nil
}

// option is the index of the option of value v, or -1.
func (f Field) option(v string) int {
	return slices.IndexFunc(f.Options, func(o Option) bool { return o.Value == v })
}

// Read reads what the user typed as the field's value, or says, as an
// *Invalid, why it will not do. A choice may be typed as its label, its
// value or its number; several of a Choices, separated by commas.
func (f Field) Read(text string) (any, error) {
	text = strings.TrimSpace(text)
	var v any
	switch f.Kind {
	case Text:
		v = text
	case Number, Integer:
		n, err := strconv.ParseFloat(strings.ReplaceAll(text, " ", ""), 64)
		if err != nil {
			what := "a number"
			if f.Kind == Integer {
				what = "a whole number"
			}
			return nil, f.invalid("that is not %s.", what)
		}
		if err := f.checkNumber(n); err != nil {
			return nil, err
		}
		if f.Kind == Integer {
			return int64(n), nil
		}
		return n, nil
	case Boolean:
		switch strings.ToLower(text) {
		case "yes", "y", "true", "1":
			v = true
		case "no", "n", "false", "0":
			v = false
		default:
			return nil, f.invalid("yes or no, please.")
		}
	case Choice:
		i := f.match(text)
		if i < 0 {
			return nil, f.invalid("that is not one of the choices.")
		}
		v = f.Options[i].Value
	case Choices:
		var list []string
		for _, part := range strings.Split(text, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			i := f.match(part)
			if i < 0 {
				return nil, f.invalid("%q is not one of the choices.", cut(part, 40))
			}
			if !slices.Contains(list, f.Options[i].Value) {
				list = append(list, f.Options[i].Value)
			}
		}
		v = list
	}
	if err := f.Check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// match finds a typed choice: its number (from 1), value or label.
func (f Field) match(text string) int {
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(f.Options) {
		return n - 1
	}
	for i, o := range f.Options {
		if strings.EqualFold(o.Value, text) || strings.EqualFold(o.Label, text) {
			return i
		}
	}
	return -1
}

// Show is a value of the field as the user reads it: a choice's label,
// Yes or No, a list joined with commas.
func (f Field) Show(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "Yes"
		}
		return "No"
	case float64:
		return formatNumber(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		if i := f.option(x); i >= 0 && f.Kind == Choice {
			return f.Options[i].Label
		}
		return x
	case []string:
		labels := make([]string, len(x))
		for i, s := range x {
			labels[i] = s
			if j := f.option(s); j >= 0 {
				labels[i] = f.Options[j].Label
			}
		}
		if len(labels) == 0 {
			return "none"
		}
		return strings.Join(labels, ", ")
	}
	return fmt.Sprint(v)
}

// Hint says in a few words what the field takes: "a whole number from 1
// to 12", "2 to 40 characters", "an email address".
func (f Field) Hint() string {
	switch f.Kind {
	case Number, Integer:
		what := "a number"
		if f.Kind == Integer {
			what = "a whole number"
		}
		switch {
		case f.Minimum != nil && f.Maximum != nil:
			return fmt.Sprintf("%s from %s to %s", what, formatNumber(*f.Minimum), formatNumber(*f.Maximum))
		case f.Minimum != nil:
			return fmt.Sprintf("%s, at least %s", what, formatNumber(*f.Minimum))
		case f.Maximum != nil:
			return fmt.Sprintf("%s, at most %s", what, formatNumber(*f.Maximum))
		}
		return what
	case Text:
		return f.textHint()
	case Boolean:
		return "yes or no"
	case Choice:
		return "one of the choices"
	case Choices:
		return "any of the choices"
	}
	return ""
}

func (f Field) textHint() string {
	switch f.Format {
	case "email":
		return "an email address"
	case "uri":
		return "a web address"
	case "date":
		return "a date, YYYY-MM-DD"
	case "date-time":
		return "a date and time, like 2026-12-24T18:30:00Z"
	}
	switch {
	case f.MinLength > 0 && f.MaxLength >= 0:
		return fmt.Sprintf("a text of %d to %d characters", f.MinLength, f.MaxLength)
	case f.MinLength > 0:
		return fmt.Sprintf("a text of at least %d characters", f.MinLength)
	case f.MaxLength >= 0:
		return fmt.Sprintf("a text of at most %d characters", f.MaxLength)
	}
	return "a text"
}

func formatNumber(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }
