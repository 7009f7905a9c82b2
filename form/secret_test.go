package form_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgram/mcpgram/form"
)

func TestFieldSecret(t *testing.T) {
	type field struct {
		name, schema string
		want         bool
	}
	// Plain string fields, by their names alone: secret, then not.
	const text = `{"type": "string"}`
	var fields []field
	for _, name := range []string{"password", "newPassword", "api_key", "apiKey", "APIKey", "api-key", "access_token", "accesstoken", "client_secret", "OTP", "mypassword"} {
		fields = append(fields, field{name, text, true})
	}
	for _, name := range []string{"name", "max_tokens", "shipping", "options"} {
		fields = append(fields, field{name, text, false})
	}
	// Fields of other schemas: a format, a title, another type, an enum.
	fields = append(fields, []field{
		{"pw", `{"type": "string", "format": "password"}`, true},
		{"answer", `{"type": "string", "title": "Your Passphrase"}`, true},
		{"pin", `{"type": "integer"}`, true},
		{"code", `{"type": "string", "title": "Verification code"}`, true},
		{"cvv", `{"type": "number"}`, true},
		{"max_tokens", `{"type": "integer"}`, false},
		{"token_count", `{"type": "integer"}`, false},
		{"pinned", `{"type": "boolean"}`, false},
		{"password_ok", `{"type": "boolean"}`, false},
		{"token", `{"type": "string", "enum": ["a", "b"]}`, false},
		{"format", `{"type": "string", "format": "email"}`, false},
	}...)
	for _, c := range fields {
		t.Run(c.name+" "+c.schema, func(t *testing.T) {
			fm, err := form.Parse(json.RawMessage(`{"type": "object", "properties": {"` + c.name + `": ` + c.schema + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := fm.Fields[0].Secret(); got != c.want {
				t.Errorf("Secret() = %v, want %v", got, c.want)
			}
		})
	}
}
