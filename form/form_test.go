package form_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/form"
)

const booking = `{"type":"object","properties":{
	"party":{"type":"integer","title":"Party size","minimum":1,"maximum":12,"default":2},
	"date":{"type":"string","title":"Date","format":"date"},
	"name":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[A-Z]"},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"at":{"type":"string","format":"date-time"},
	"seating":{"type":"string","oneOf":[{"const":"indoor","title":"Indoors"},{"const":"outdoor","title":"On the terrace"}]},
	"size":{"type":"string","enum":["s","m"],"enumNames":["Small","Medium"]},
	"vegetarian":{"type":"boolean","default":false},
	"score":{"type":"number","maximum":10},
	"extras":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["cake","flowers","candles"]}}
},"required":["party","date","seating"]}`

func parse(t *testing.T, schema string) *form.Form {
	t.Helper()
	f, err := form.Parse(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func TestParse(t *testing.T) {
	f := parse(t, booking)
	var got []string
	for _, fd := range f.Fields {
		got = append(got, fmt.Sprintf("%s:%s:%v:%v", fd.Name, fd.Kind, fd.Required, fd.Default))
	}
	want := []string{
		"party:integer:true:2", "date:text:true:<nil>", "name:text:false:<nil>", "email:text:false:<nil>",
		"site:text:false:<nil>", "at:text:false:<nil>", "seating:choice:true:<nil>", "size:choice:false:<nil>",
		"vegetarian:boolean:false:false", "score:number:false:<nil>", "extras:choices:false:<nil>",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields, in the schema's order:\n got %v\nwant %v", got, want)
	}
	if o := f.Fields[6].Options; o[1].Label != "On the terrace" || o[1].Value != "outdoor" {
		t.Errorf("oneOf options = %+v", o)
	}
	if o := f.Fields[7].Options; o[0].Label != "Small" {
		t.Errorf("enumNames options = %+v", o)
	}
}

func TestParseRefuses(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"type":"object","properties":{`)
	for i := range 200 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"f%d":{"type":"string"}`, i)
	}
	many.WriteString("}}")
	tests := []struct {
		name, schema, want string
	}{
		{"200 fields", many.String(), "more than 50 fields"},
		{"nested object", `{"type":"object","properties":{"a":{"type":"object"}}}`, `field "a": of type "object"`},
		{"array of objects", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, "array of other than enum"},
		{"not an object", `{"type":"string"}`, "not an object"},
		{"numeric enum", `{"properties":{"a":{"enum":[1,2]}}}`, "not a string"},
		{"duplicate option", `{"properties":{"a":{"enum":["x","x"]}}}`, "given twice"},
		{"not JSON", `{"properties":`, "form: schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := form.Parse(json.RawMessage(tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := form.Parse(json.RawMessage(many.String())); !errors.Is(err, form.ErrTooManyFields) {
		t.Errorf("err = %v, want ErrTooManyFields", err)
	}
}

// Typed answers are checked against the schema, with a reason the user can
// act on.
func TestRead(t *testing.T) {
	f := parse(t, booking)
	field := func(name string) form.Field {
		for _, fd := range f.Fields {
			if fd.Name == name {
				return fd
			}
		}
		t.Fatalf("no field %s", name)
		return form.Field{}
	}
	tests := []struct {
		field, text string
		want        any
		reason      string
	}{
		{"party", "4", int64(4), ""},
		{"party", "0", nil, "at least 1"},
		{"party", "13", nil, "at most 12"},
		{"party", "2.5", nil, "a whole number"},
		{"party", "four", nil, "not a whole number"},
		{"party", "NaN", nil, "not a number"},
		{"score", "9.5", 9.5, ""},
		{"score", "Inf", nil, "not a number"},
		{"date", "2026-12-24", "2026-12-24", ""},
		{"date", "24/12/2026", nil, "YYYY-MM-DD"},
		{"name", "Al", "Al", ""},
		{"name", "A", nil, "at least 2 characters"},
		{"name", "Alexandra", nil, "at most 5 characters"},
		{"name", "al", nil, "form asked for"},
		{"email", "ann@example.com", "ann@example.com", ""},
		{"email", "Ann <ann@example.com>", nil, "not an email"},
		{"email", "ann", nil, "not an email"},
		{"site", "https://example.com/x", "https://example.com/x", ""},
		{"site", "example.com", nil, "not a full address"},
		{"at", "2026-12-24T18:30:00Z", "2026-12-24T18:30:00Z", ""},
		{"at", "2026-12-24 18:30", nil, "date and time"},
		{"seating", "on the terrace", "outdoor", ""},
		{"seating", "2", "outdoor", ""},
		{"seating", "indoor", "indoor", ""},
		{"seating", "roof", nil, "not one of the choices"},
		{"vegetarian", "yes", true, ""},
		{"vegetarian", "maybe", nil, "yes or no"},
		{"extras", "cake, Candles", []string{"cake", "candles"}, ""},
		{"extras", "cake, flowers, candles", nil, "at most 2"},
		{"extras", "pony", nil, "not one of the choices"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.text, func(t *testing.T) {
			got, err := field(tt.field).Read(tt.text)
			if tt.reason != "" {
				var inv *form.Invalid
				if !errors.As(err, &inv) || !strings.Contains(inv.Reason, tt.reason) {
					t.Errorf("Read(%q) = %v, %v; want a refusal saying %q", tt.text, got, err, tt.reason)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read(%q) = %#v, %v; want %#v", tt.text, got, err, tt.want)
			}
		})
	}
}

// A walk through a form: presses, typed answers, a refused one, toggles,
// back, and a submit that sends answers and defaults, in types the schema
// names, through a JSON round trip of the state as a store keeps it.
func TestWalk(t *testing.T) {
	f := parse(t, booking)
	var st form.State
	roundTrip := func() {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		st = form.State{}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
	}
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		roundTrip()
	}
	step("default party", f.TakeDefault(&st))
	if err := f.Type(&st, "christmas"); err == nil {
		t.Fatal("a date that is not one was taken")
	}
	step("date", f.Type(&st, "2026-12-24"))
	step("skip name", f.Next(&st))
	step("skip email", f.Next(&st))
	step("back", f.Back(&st))
	step("email", f.Type(&st, "ann@example.com"))
	step("skip site", f.Next(&st))
	step("skip at", f.Next(&st))
	if err := f.Toggle(&st, 0); !errors.Is(err, form.ErrWrongField) {
		t.Errorf("a toggle on a choice field: %v", err)
	}
	step("seating", f.Choose(&st, 1))
	step("skip size", f.Next(&st))
	step("vegetarian", f.Choose(&st, 0))
	step("skip score", f.Next(&st))
	step("toggle cake", f.Toggle(&st, 0))
	step("toggle candles", f.Toggle(&st, 2))
	step("toggle flowers", f.Toggle(&st, 1))
	if err := f.Done(&st); err == nil {
		t.Error("three extras of at most two were taken")
	}
	step("untoggle cake", f.Toggle(&st, 0))
	step("done", f.Done(&st))
	if _, more := f.Current(st); more {
		t.Errorf("still asking at step %d", st.Step)
	}
	got, err := f.Submit(st)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"date":"2026-12-24","email":"ann@example.com","extras":["flowers","candles"],"party":2,"seating":"outdoor","vegetarian":true}`
	if string(b) != want {
		t.Errorf("content = %s\nwant %s", b, want)
	}
}

func TestSubmitMissing(t *testing.T) {
	f := parse(t, booking)
	st := form.State{}
	_, err := f.Submit(st)
	var m *form.Missing
	if !errors.As(err, &m) || !reflect.DeepEqual(m.Fields, []string{"Date", "seating"}) || m.Step != 1 {
		t.Errorf("err = %#v, want Date and seating missing from step 1", err)
	}
	if _, ok := f.Defaults(); ok {
		t.Error("Defaults took a form whose required fields have none")
	}
}

// The defaults a form answered by nobody sends, for the SEP-1034 scenario
// of the conformance suite: every field has one and none is required.
func TestDefaults(t *testing.T) {
	f := parse(t, `{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","default":true},
		"bad":{"type":"string","enum":["a"],"default":"z"},
		"nothing":{"type":"string"}
	},"required":[]}`)
	got, ok := f.Defaults()
	b, _ := json.Marshal(got)
	if want := `{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}`; !ok || string(b) != want {
		t.Errorf("Defaults = %s, %v; want %s (an invalid default is none)", b, ok, want)
	}
}

// Hostile schemas and answers never panic: they parse or are refused, and
// every move on what parsed either works or says why not.
func FuzzForm(f *testing.F) {
	f.Add([]byte(booking), "2026-12-24", 3)
	f.Add([]byte(`{"properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x"}]}}}}`), "x, y", 0)
	f.Add([]byte(`{"properties":{"a":{"type":"integer","minimum":5,"maximum":1,"default":3}}}`), "1e308", 1)
	f.Fuzz(func(t *testing.T, schema []byte, text string, n int) {
		fm, err := form.Parse(schema)
		if err != nil {
			return
		}
		var st form.State
		for i := 0; i < 2*len(fm.Fields)+2; i++ {
			_ = fm.Type(&st, text)
			_ = fm.Choose(&st, n)
			_ = fm.Toggle(&st, n)
			_ = fm.Done(&st)
			_ = fm.TakeDefault(&st)
			_ = fm.Next(&st)
		}
		_ = fm.Back(&st)
		if content, err := fm.Submit(st); err == nil {
			if _, err := json.Marshal(content); err != nil {
				t.Fatalf("content does not encode: %v", err)
			}
		}
	})
}
