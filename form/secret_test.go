package form_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgram/mcpgram/form"
)

func TestFieldSecret(t *testing.T) {
	for _, c := range []struct {
		name, schema string
		want         bool
	}{
		{"password", `{"type": "string"}`, true},
		{"pw", `{"type": "string", "format": "password"}`, true},
		{"answer", `{"type": "string", "title": "Your Passphrase"}`, true},
		{"newPassword", `{"type": "string"}`, true},
		{"api_key", `{"type": "string"}`, true},
		{"apiKey", `{"type": "string"}`, true},
		{"APIKey", `{"type": "string"}`, true},
		{"api-key", `{"type": "string"}`, true},
		{"access_token", `{"type": "string"}`, true},
		{"accesstoken", `{"type": "string"}`, true},
		{"client_secret", `{"type": "string"}`, true},
		{"OTP", `{"type": "string"}`, true},
		{"pin", `{"type": "integer"}`, true},
		{"code", `{"type": "string", "title": "Verification code"}`, true},
		{"cvv", `{"type": "number"}`, true},
		{"mypassword", `{"type": "string"}`, true},
		{"name", `{"type": "string"}`, false},
		{"max_tokens", `{"type": "integer"}`, false},
		{"max_tokens", `{"type": "string"}`, false},
		{"token_count", `{"type": "integer"}`, false},
		{"shipping", `{"type": "string"}`, false},
		{"pinned", `{"type": "boolean"}`, false},
		{"options", `{"type": "string"}`, false},
		{"password_ok", `{"type": "boolean"}`, false},
		{"token", `{"type": "string", "enum": ["a", "b"]}`, false},
		{"format", `{"type": "string", "format": "email"}`, false},
	} {
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
