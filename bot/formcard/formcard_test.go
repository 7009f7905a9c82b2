package formcard_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/formcard"
	"github.com/mcpgram/mcpgram/form"
)

// A card never shows a secret field's value, answered or by default,
// on its text or its buttons, and warns that the server, not mcpgram,
// asks for it; a form without a secret gets no warning and shows its
// values.
func TestSecretFields(t *testing.T) {
	const warning = "not mcpgram, asks you for a password, token or PIN"
	for _, c := range []struct {
		name, schema string
		values       map[string]json.RawMessage
		step         int
		asker        string
		want, never  []string
	}{
		{
			name:   "a password answered",
			schema: `{"type": "object", "properties": {"password": {"type": "string"}, "note": {"type": "string"}}}`,
			values: map[string]json.RawMessage{"password": json.RawMessage(`"hunter2"`)}, step: 1, asker: "vault",
			want: []string{"✔️ password: " + formcard.Hidden, "<b>vault</b>, " + warning}, never: []string{"hunter2"},
		},
		{
			name:   "a token with a default",
			schema: `{"type": "object", "properties": {"api_key": {"type": "string", "default": "sk-default-1"}}}`,
			asker:  "vault",
			want:   []string{"<b>vault</b>, " + warning, "Use default"}, never: []string{"sk-default-1"},
		},
		{
			name:   "a token with a default, not asked now",
			schema: `{"type": "object", "properties": {"x": {"type": "string"}, "accessToken": {"type": "string", "default": "tok-9"}}}`,
			asker:  "vault",
			want:   []string{"(default: " + formcard.Hidden + ")"}, never: []string{"tok-9"},
		},
		{
			name:   "a PIN by its format",
			schema: `{"type": "object", "properties": {"code": {"type": "string", "format": "password"}, "x": {"type": "string"}}}`,
			values: map[string]json.RawMessage{"code": json.RawMessage(`"4711"`)}, step: 1, asker: "bank",
			want: []string{"✔️ code: " + formcard.Hidden, "<b>bank</b>, " + warning}, never: []string{"4711"},
		},
		{
			name:   "no secret",
			schema: `{"type": "object", "properties": {"name": {"type": "string"}, "x": {"type": "string"}}}`,
			values: map[string]json.RawMessage{"name": json.RawMessage(`"Ada"`)}, step: 1, asker: "shop",
			want: []string{"✔️ name: Ada"}, never: []string{warning},
		},
		{
			name:   "a secret, nobody named as asking",
			schema: `{"type": "object", "properties": {"password": {"type": "string"}, "x": {"type": "string"}}}`,
			values: map[string]json.RawMessage{"password": json.RawMessage(`"hunter2"`)}, step: 1,
			want: []string{"✔️ password: " + formcard.Hidden}, never: []string{"hunter2", warning},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm, err := form.Parse(json.RawMessage(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			card := formcard.Card{ID: 1, Head: "head", Fields: fm, State: form.State{Step: c.step, Values: c.values}, Asker: c.asker}
			got := formcard.Text(card)
			for _, row := range formcard.Keyboard(card).InlineKeyboard {
				for _, b := range row {
					got += "\n[" + b.Text + "]"
				}
			}
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Errorf("the card lacks %q:\n%s", want, got)
				}
			}
			for _, never := range c.never {
				if strings.Contains(got, never) {
					t.Errorf("the card shows %q:\n%s", never, got)
				}
			}
		})
	}
}
