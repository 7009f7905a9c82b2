package llm

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// A Kind sorts model call failures by what the user and the caller can do
// about them.
type Kind int

// The kinds of failure.
const (
	// KindNetwork: the endpoint could not be reached or the connection
	// dropped. Transient.
	KindNetwork Kind = iota + 1
	// KindTimeout: the endpoint stayed silent longer than Options.Timeout.
	// Transient.
	KindTimeout
	// KindRateLimited: 429. Transient.
	KindRateLimited
	// KindServer: 5xx, or an error sent inside a stream. Transient.
	KindServer
	// KindAuth: 401 or 403; the key is wrong or lacks access.
	KindAuth
	// KindBadRequest: any other 4xx (unknown model, prompt too long, ...).
	KindBadRequest
	// KindTooLong: the reply passed its size bound (see
	// Options.MaxReplyBytes) and was cut; Error.Limit is the bound.
	KindTooLong
)

// Transient reports whether a retry may succeed.
func (k Kind) Transient() bool {
	switch k {
	case KindNetwork, KindTimeout, KindRateLimited, KindServer:
		return true
	}
	return false
}

func (k Kind) String() string {
	switch k {
	case KindNetwork:
		return "network"
	case KindTimeout:
		return "timeout"
	case KindRateLimited:
		return "rate limited"
	case KindServer:
		return "server error"
	case KindAuth:
		return "unauthorized"
	case KindBadRequest:
		return "bad request"
	case KindTooLong:
		return "too long"
	}
	return "unknown"
}

// An Error is a failed model call, after any retries.
type Error struct {
	Kind Kind
	// StatusCode is the HTTP status, 0 when there was none.
	StatusCode int
	// Message is the provider's own error message, if it sent one.
	Message string
	// RetryAfter is what the server asked us to wait, 0 if it did not say.
	RetryAfter time.Duration
	// Attempts made before giving up.
	Attempts int
	// Limit is the bound a KindTooLong reply passed, in bytes; Read is
	// how much of the reply was read (text and arguments) when it was cut.
	Limit, Read int
	Err         error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model call: %s", e.Kind)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// UserMessage is a short plain sentence for the person chatting, without
// details that belong in the log.
func (e *Error) UserMessage() string {
	switch e.Kind {
	case KindRateLimited:
		if e.RetryAfter > 0 {
			return fmt.Sprintf("The model provider is rate limiting us; please try again in %s.", roundWait(e.RetryAfter))
		}
		return "The model provider is rate limiting us; please try again in a minute."
	case KindServer:
		return "The model provider is having trouble right now; please try again in a minute."
	case KindTimeout:
		return "The model took too long to answer; please try again."
	case KindNetwork:
		return "The model provider cannot be reached right now; please try again later."
	case KindAuth:
		return "The model provider refused our credentials; the operator must check the API key."
	case KindTooLong:
		return fmt.Sprintf("The model's reply was too long (over %s), so I stopped it. Please ask for something shorter.", sizeText(e.Limit))
	case KindBadRequest:
		if strings.Contains(strings.ToLower(e.Message), "context") {
			return "The conversation is too long for the model; send /reset to start a new one."
		}
		return "The model provider rejected the request; the operator should check the model settings."
	}
	return "The model call failed; please try again."
}

func roundWait(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d seconds", int((d+time.Second-1)/time.Second))
	}
	return fmt.Sprintf("%d minutes", int((d+time.Minute-1)/time.Minute))
}

// classify turns what go-openai returned into an *Error.
func classify(err error, retryAfter time.Duration) *Error {
	e := &Error{Err: err, RetryAfter: retryAfter}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		e.StatusCode = apiErr.HTTPStatusCode
		e.Message = apiErr.Message
	case errors.As(err, &reqErr):
		e.StatusCode = reqErr.HTTPStatusCode
		e.Message = strings.TrimSpace(string(reqErr.Body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	switch code := e.StatusCode; {
	case code == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
	case code == http.StatusRequestTimeout || code >= 500:
		e.Kind = KindServer
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.Kind = KindAuth
	case code >= 400:
		e.Kind = KindBadRequest
	case apiErr != nil:
		// An error event inside a 200 stream: the provider failed midway.
		e.Kind = KindServer
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			e.Kind = KindTimeout
		} else {
			e.Kind = KindNetwork
		}
	}
	return e
}

// scrub removes the API key, and any bearer credential, from what e says:
// some endpoints echo the request's Authorization header in their error
// body, and an *Error is logged. The original error is not kept, so no
// chain of wraps can print the key either.
func scrub(e *Error, key string) *Error {
	e.Message = scrubText(e.Message, key)
	if e.Err != nil {
		e.Err = errors.New(scrubText(e.Err.Error(), key))
	}
	return e
}

// bearerRE finds a bearer credential, whatever the key it holds.
var bearerRE = regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;}\]]+`)

func scrubText(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return bearerRE.ReplaceAllString(s, "${1}[redacted]")
}

// parseRetryAfter reads Retry-After (seconds or an HTTP date) and the
// retry-after-ms that OpenAI also sends; 0 when neither is usable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
