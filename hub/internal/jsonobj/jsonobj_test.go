package jsonobj_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgram/mcpgram/hub/internal/jsonobj"
)

func TestParseKeepsOrderAndLastRepeat(t *testing.T) {
	ms, err := jsonobj.Parse(json.RawMessage(`{"b": 1, "a": [2], "b": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(jsonobj.Encode(ms)), `{"b":3,"a":[2]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	ms = jsonobj.Set(ms, "c", json.RawMessage(`true`))
	if v, ok := jsonobj.Get(ms, "c"); !ok || string(v) != "true" {
		t.Errorf("Get(c) = %s, %v; want true, true", v, ok)
	}
}

func TestSpansLocateKeysAndValues(t *testing.T) {
	data := []byte("{\n  \"x\": {\"y\": 1},\n  \"z\": \"w\"\n}")
	spans, closing, err := jsonobj.Spans(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := closing, len(data)-1; got != want {
		t.Errorf("closing brace at %d, want %d", got, want)
	}
	z, ok := jsonobj.Last(spans, "z")
	if !ok {
		t.Fatal("no member z")
	}
	if got, want := string(data[z.Start:z.End]), `"w"`; got != want {
		t.Errorf("value of z: got %s, want %s", got, want)
	}
	if got, want := string(data[z.KeyStart:z.KeyStart+3]), `"z"`; got != want {
		t.Errorf("key of z: got %s, want %s", got, want)
	}
	x, _ := jsonobj.Last(spans, "x")
	inner, _, err := jsonobj.Spans(data, x.Start)
	if err != nil || len(inner) != 1 || inner[0].Key != "y" {
		t.Errorf("inner spans of x: got %v, %v; want one member y", inner, err)
	}
}
