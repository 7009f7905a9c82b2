package hub

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A member is one key and its raw value in a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// parseObject decodes a JSON object keeping its members in order, so that a
// write puts the file back the way the user arranged it.
func parseObject(data json.RawMessage) ([]member, error) {
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
	var out []member
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
			out[i].value = v
			continue
		}
		index[key] = len(out)
		out = append(out, member{key, v})
	}
	return out, nil
}

func encodeObject(members []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func setMember(members []member, key string, value json.RawMessage) []member {
	for i := range members {
		if members[i].key == key {
			members[i].value = value
			return members
		}
	}
	return append(members, member{key, value})
}

func getMember(members []member, key string) (json.RawMessage, bool) {
	for _, m := range members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// errLayout means splice could not follow the file's bytes; reencode can.
var errLayout = errors.New("unexpected layout")

// A span is one member of a JSON object with the offsets of its key and
// value in the file.
type span struct {
	key        string
	keyStart   int
	start, end int
	value      json.RawMessage
}

// spans returns the members of the JSON object starting at data[off:], and
// the offset of its closing brace.
func spans(data []byte, off int) ([]span, int, error) {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, 0, errors.New("want a JSON object")
	}
	var out []span
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
			return nil, 0, errLayout
		}
		out = append(out, span{key, keyStart, start, end, raw})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, 0, errLayout
	}
	closing := off + int(dec.InputOffset()) - 1
	if data[closing] != '}' {
		return nil, 0, errLayout
	}
	return out, closing, nil
}

// lastSpan returns the member named key; the last one wins, as in
// encoding/json.
func lastSpan(members []span, key string) (span, bool) {
	for i := len(members) - 1; i >= 0; i-- {
		if members[i].key == key {
			return members[i], true
		}
	}
	return span{}, false
}
