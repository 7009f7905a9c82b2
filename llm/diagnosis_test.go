package llm_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// What the operator reads says what is wrong and what to check, from
// what the endpoint answered, and never holds the key.
func TestDiagnosis(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/v1"
	closed.Close()
	tests := []struct {
		name  string
		reply *llmfake.Reply // nil: the endpoint refuses connections
		want  []string
	}{
		{"connection refused", nil, []string{"The model endpoint " + refused + " cannot be reached (connection refused): check that it runs and that its base URL is right."}},
		{"unknown model", &llmfake.Reply{Status: 404, Error: "The model `fake-model` does not exist"}, []string{`does not know the model "fake-model" (HTTP 404 Not Found: The model ` + "`fake-model`" + ` does not exist): check the model's name.`}},
		{"wrong path", &llmfake.Reply{Status: 404, Error: "no route"}, []string{"has no chat completions (HTTP 404 Not Found: no route): check its base URL, which ends in the API's version, such as /v1."}},
		{"key refused", &llmfake.Reply{Status: 401, Error: "Incorrect API key provided: sk-test"}, []string{"refused the API key in OPENAI_API_KEY (HTTP 401 Unauthorized: Incorrect API key provided: [redacted])."}},
		{"context too long", &llmfake.Reply{Status: 400, Error: "This model's maximum context length is 8192 tokens"}, []string{`The conversation is too long for the model "fake-model" (HTTP 400 Bad Request: This model's maximum context length is 8192 tokens): /reset starts a new one.`}},
		{"bad request", &llmfake.Reply{Status: 400, Error: "temperature too high"}, []string{`refused the request for "fake-model" (HTTP 400 Bad Request: temperature too high).`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mcpgram.Profile{Name: "default", BaseURL: refused, APIKey: "sk-test", APIKeyEnv: "OPENAI_API_KEY", Model: "fake-model"}
			if tt.reply != nil {
				srv := llmfake.New(t, llmfake.Script(*tt.reply))
				p.BaseURL = srv.URL()
			}
			c, err := llm.New(p, llm.Options{MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want an *llm.Error", err)
			}
			got := le.Diagnosis(p)
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("Diagnosis() = %q, want %q", got, want)
				}
			}
			if strings.Contains(got, "sk-test") {
				t.Errorf("Diagnosis() = %q holds the key", got)
			}
		})
	}
}
