// Arguments as a model writes them: one JSON object, bounded, or a near
// miss of one that the repairs in this package can read.

package toolcall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DecodeArguments reads a call's arguments as one JSON object, numbers as
// json.Number: an empty value means no arguments, a Markdown code fence
// around them is tolerated, and MaxArgumentBytes and MaxArgumentDepth
// bound them. When they are not a JSON object, it repairs what it plainly
// can: JSON slips (repairJSON; closing what is left open only when whole),
// or elements or "key: value" lines typed by the tool's input schema
// (formArguments, only when whole). whole is false when the reply ended
// inside the arguments. It returns the kinds of repair made (the Repair
// constants of this package), nil when none was needed. What it cannot
// repair gets the original error, written for the model.
func DecodeArguments(raw string, schema json.RawMessage, whole bool) (map[string]any, []string, error) {
	args, err := decodeArguments(raw)
	trimmed := strings.TrimSpace(Unfence(raw))
	if err == nil || len(trimmed) > MaxArgumentBytes {
		return args, nil, err
	}
	switch trimmed[0] {
	case '{':
		if fixed, kinds, ok := repairJSON(trimmed, whole); ok {
			if args, ferr := decodeArguments(fixed); ferr == nil {
				return args, kinds, nil
			}
		}
	case '[', '"', '\'':
	default:
		if !whole {
			break
		}
		args, kind, ferr := formArguments(trimmed, schema)
		if ferr != nil {
			if strings.HasPrefix(trimmed, parameterOpen) {
				// Not JSON by design: the JSON error would say nothing.
				why := "write each as <parameter=NAME>VALUE</parameter>, each name once"
				if ferr != errNotConvertible {
					why = strings.TrimPrefix(ferr.Error(), errNotConvertible.Error()+": ")
				}
				return nil, nil, fmt.Errorf("the <parameter=…> elements cannot be read as the tool's arguments: %s", why)
			}
			break
		}
		canon, merr := json.Marshal(args)
		if merr != nil {
			break
		}
		if berr := checkBounds(string(canon)); berr != nil {
			return nil, nil, berr
		}
		return args, []string{kind}, nil
	}
	return nil, nil, err
}

// decodeArguments reads one JSON object. An empty value means no
// arguments; a Markdown code fence around the JSON is tolerated.
func decodeArguments(raw string) (map[string]any, error) {
	raw = strings.TrimSpace(Unfence(raw))
	if raw == "" {
		return map[string]any{}, nil
	}
	if err := checkBounds(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(raw, err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		return nil, fmt.Errorf("unexpected text after the JSON object (%s)", position(raw, off))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments must be a JSON object, not %s", jsonKind(v))
	}
	return obj, nil
}

// Bounds of one call's arguments, checked before anything is decoded or
// sent. No real tool nests its arguments deeper than a few levels, and
// servers choke on what is far deeper (one answered 9,999 levels with a
// parse error the hub could not match to the call, which then waited out
// its whole timeout); 1 MiB is far beyond what a model writes for a call
// and still small next to what servers accept.
const (
	MaxArgumentDepth = 64
	MaxArgumentBytes = 1 << 20
)

// checkBounds refuses arguments over MaxArgumentBytes or nested deeper
// than MaxArgumentDepth, in one pass that skips the inside of strings.
func checkBounds(raw string) error {
	if len(raw) > MaxArgumentBytes {
		return fmt.Errorf("the arguments are %d bytes long; the limit is %d (1 MiB)", len(raw), MaxArgumentBytes)
	}
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxArgumentDepth {
				return fmt.Errorf("the arguments nest deeper than %d levels of objects and arrays (%s)", MaxArgumentDepth, position(raw, int64(i)))
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

func jsonError(raw string, err error, off int64) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		return fmt.Errorf("%s (%s)", syn.Error(), position(raw, syn.Offset-1))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("unexpected end of JSON input (%s): a bracket or quote is not closed", position(raw, int64(len(raw))))
	}
	return fmt.Errorf("%s (%s)", err.Error(), position(raw, off))
}

// position describes the byte at offset off (from 0) as a line and column
// counting from 1.
func position(s string, off int64) string {
	if off > int64(len(s)) {
		off = int64(len(s))
	}
	if off < 0 {
		off = 0
	}
	before := s[:off]
	line := strings.Count(before, "\n") + 1
	col := len(before) - strings.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "that"
}

// Unfence returns what a Markdown code fence around s holds, or s when
// it is not fenced whole.
func Unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	t = strings.TrimSuffix(t, "```")
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return s
	}
	return t[nl+1:]
}
