package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// Diagnosis says, for the operator who can act on it, what went wrong
// with a call to profile p's endpoint and what to check: the endpoint
// unreachable (connection refused, no such host), silent, refusing the
// key, not knowing the model, or failing. It names the endpoint (without
// credentials or query) and the model, and quotes what the endpoint
// said; never the key. UserMessage is the sentence for anyone else.
func (e *Error) Diagnosis(p mcpgram.Profile) string {
	endpoint := endpointName(p.BaseURL)
	said := e.said()
	switch e.Kind {
	case KindNetwork:
		return fmt.Sprintf("The model endpoint %s cannot be reached (%s): check that it runs and that its base URL is right.", endpoint, cause(e))
	case KindTimeout:
		return fmt.Sprintf("The model endpoint %s did not answer in time (%s).", endpoint, cause(e))
	case KindAuth:
		key := "its API key"
		if p.APIKeyEnv != "" {
			key = "the API key in " + p.APIKeyEnv
		}
		return fmt.Sprintf("The model endpoint %s refused %s (%s).", endpoint, key, said)
	case KindBadRequest:
		switch {
		case e.StatusCode == http.StatusNotFound && strings.Contains(strings.ToLower(e.Message), "model"):
			return fmt.Sprintf("The model endpoint %s does not know the model %q (%s): check the model's name.", endpoint, p.Model, said)
		case e.StatusCode == http.StatusNotFound:
			return fmt.Sprintf("The model endpoint %s has no chat completions (%s): check its base URL, which ends in the API's version, such as /v1.", endpoint, said)
		case strings.Contains(strings.ToLower(e.Message), "context"):
			return fmt.Sprintf("The conversation is too long for the model %q (%s): /reset starts a new one.", p.Model, said)
		}
		return fmt.Sprintf("The model endpoint %s refused the request for %q (%s).", endpoint, p.Model, said)
	case KindRateLimited:
		return fmt.Sprintf("The model endpoint %s is rate limiting (%s).", endpoint, said)
	case KindServer:
		return fmt.Sprintf("The model endpoint %s failed (%s).", endpoint, said)
	}
	return fmt.Sprintf("The call to the model endpoint %s failed: %s.", endpoint, cause(e))
}

// said is what the endpoint answered: the HTTP status and its message.
func (e *Error) said() string {
	s := "no HTTP answer"
	if e.StatusCode != 0 {
		s = fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// cause is the last part of what failed, the part that says why:
// "connection refused" of "dial tcp 127.0.0.1:9: connect: connection
// refused".
func cause(e *Error) string {
	if e.Err == nil {
		return e.Kind.String()
	}
	msg := e.Err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// endpointName is the base URL without user, password, query or fragment.
func endpointName(raw string) string {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unreadable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}
