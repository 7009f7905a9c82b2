// Package jsonobj reads JSON objects as people wrote them: their members
// in order, and where each lies in the file's bytes, so that a program can
// change one value of a file and leave the rest, layout and all, as it
// was.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A Member is one key and its raw value in a JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Parse decodes a JSON object keeping its members in order, so that a
// write puts the file back the way the user arranged it.
func Parse(data json.RawMessage) ([]Member, error) {
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("want a JSON object")
	}
	var out []Member
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		// A repeated key: the last one wins, as in encoding/json, in the
		// place of the first.
		if i, ok := index[key]; ok {
			out[i].Value = v
			continue
		}
		index[key] = len(out)
		out = append(out, Member{key, v})
	}
	return out, nil
}

// Encode writes members as a compact JSON object, in their order.
func Encode(members []Member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Set gives the member key of members value, adding it last if there
// is none.
func Set(members []Member, key string, value json.RawMessage) []Member {
	for i := range members {
		if members[i].Key == key {
			members[i].Value = value
			return members
		}
	}
	return append(members, Member{key, value})
}

// Get returns the value of the member key of members.
func Get(members []Member, key string) (json.RawMessage, bool) {
	for _, m := range members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// ErrLayout means Spans could not follow the bytes of an object (or an
// edit made of them is not valid JSON): decode and encode it instead.
var ErrLayout = errors.New("unexpected layout")

// A Span is one member of a JSON object with the offsets of its key and
// value in the file.
type Span struct {
	Key string
	// KeyStart is the offset of the key's opening quote; Start and End
	// those of the value.
	KeyStart   int
	Start, End int
	Value      json.RawMessage
}

// Spans returns the members of the JSON object starting at data[off:], and
// the offset of its closing brace.
func Spans(data []byte, off int) ([]Span, int, error) {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, 0, errors.New("want a JSON object")
	}
	var out []Span
	for dec.More() {
		prev := off + int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, err
		}
		end := off + int(dec.InputOffset())
		start := end - len(raw)
		keyStart := bytes.IndexByte(data[prev:], '"') + prev
		if start < 0 || !bytes.Equal(data[start:end], raw) || keyStart < prev {
			return nil, 0, ErrLayout
		}
		out = append(out, Span{key, keyStart, start, end, raw})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, 0, ErrLayout
	}
	closing := off + int(dec.InputOffset()) - 1
	if data[closing] != '}' {
		return nil, 0, ErrLayout
	}
	return out, closing, nil
}

// Last returns the member named key; the last one wins, as in
// encoding/json.
func Last(members []Span, key string) (Span, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].Key == key {
			return members[i], true
		}
	}
	return Span{}, false
}
