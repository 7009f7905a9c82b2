// Package llm talks to an OpenAI-compatible chat completions endpoint
// (OpenAI, OpenRouter, DeepSeek, Groq, Ollama, vLLM, LM Studio, ...). It
// sends messages and gets text back, streamed or not. Tool use is the
// caller's business in one of two ways: written in the text (the caller
// teaches a format in the prompt and parses the reply), so models without
// native function calling work too; or native, with Request.Tools offered
// as OpenAI "tools" and the reply's "tool_calls" in Response.ToolCalls
// (streamed deltas put together by index). Transient failures (429, 5xx, timeouts, dropped
// connections) are retried with exponential backoff honouring Retry-After;
// what is left is an *Error whose Kind the caller can branch on.
package llm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram"
	openai "github.com/sashabaranov/go-openai"
)

// Defaults for the zero values of Profile and Options.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxRetries = 3
	DefaultBackoff    = time.Second
	DefaultMaxWait    = time.Minute
	// DefaultMaxIdleConns is how many idle connections to the endpoint the
	// default HTTP client keeps, enough for a bot running a few hundred
	// turns at once. net/http's default of 2 per host would make it open
	// a new TCP and TLS connection for nearly every model call.
	DefaultMaxIdleConns = 256
	// DefaultMaxReplyBytes bounds one reply, its text and its tool calls'
	// arguments together, whatever the profile's MaxTokens: 1 MiB is a
	// quarter of a million tokens, more than any model writes in one
	// reply, and what the bot can hold and show without harm.
	DefaultMaxReplyBytes = 1 << 20
	// BytesPerToken turns Profile.MaxTokens into a bound on a reply's
	// bytes: no tokenizer's tokens average half as long, so a reply past
	// it comes from an endpoint that ignores max_tokens.
	BytesPerToken = 16
)

// Options are a Client's optional settings; the zero value takes the
// defaults.
type Options struct {
	// Timeout is how long the endpoint may stay silent: when streaming,
	// until the first chunk and then between two chunks, so a long reply
	// that keeps streaming is never cut; without streaming, until the whole
	// reply is in. Default DefaultTimeout.
	Timeout time.Duration
	// MaxRetries of one call after a transient failure; default
	// DefaultMaxRetries; negative means none.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each next one
	// (plus up to 25% jitter) unless the server's Retry-After says otherwise.
	// Default DefaultBackoff; tests set it to a millisecond.
	Backoff time.Duration
	// MaxWait caps one wait. A Retry-After beyond it is not waited for: the
	// call fails at once with KindRateLimited and Error.RetryAfter set, so
	// the user hears "try again later" instead of watching a silent bot.
	// Default DefaultMaxWait.
	MaxWait time.Duration
	// HTTPClient to send requests with; default one that keeps up to
	// DefaultMaxIdleConns idle connections to the endpoint (its own
	// Timeout must be zero or longer than any reply: Timeout above is the
	// silence limit).
	HTTPClient *http.Client
	// Logger for retries; default slog.Default().
	Logger *slog.Logger
	// MaxReplyBytes bounds one reply: its text and its native tool calls'
	// arguments together; default DefaultMaxReplyBytes. With
	// Profile.MaxTokens set, the bound is the smaller of this and
	// MaxTokens × BytesPerToken. A reply past it is cut as it streams in,
	// and the call fails with KindTooLong, not retried: LLM_TIMEOUT ends
	// only silence, and an endpoint that never stops streaming would
	// otherwise never end the call, nor the memory it takes.
	MaxReplyBytes int
}

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// A Message is one chat message.
type Message struct {
	Role    string
	Content string
	// Images go with Content as image parts, for models that see them.
	Images []Image
	// ToolCalls are an assistant message's native calls.
	ToolCalls []ToolCall
	// ToolCallID names the call a RoleTool message answers.
	ToolCallID string
}

// An Image is a picture in a message.
type Image struct {
	MIMEType string
	Data     []byte
}

// A Request is one chat completion call.
type Request struct {
	Messages []Message
	// Tools, when not empty, are offered as native functions, with
	// parallel_tool_calls on: the reply may call several at once.
	Tools []Tool
	// Temperature, when not nil, replaces Profile.Temperature for this call.
	Temperature *float32
	// OnDelta, when not nil, makes the call stream: it is called with each
	// piece of reply text as it arrives, from the calling goroutine.
	OnDelta func(delta string)
	// OnRetry, when not nil, is called before each retry. When streaming,
	// text already passed to OnDelta is void: the retry starts from empty.
	OnRetry func(attempt int, wait time.Duration, err error)
	// Logger, when not nil, logs this call's retries in place of
	// Options.Logger, so they carry the caller's attributes (a turn's id).
	Logger *slog.Logger
}

// A Usage counts the tokens of one call as the provider reported them
// (zero when it reported none).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens of the prompt, read from the provider's prefix cache.
	CachedTokens int
}

// Reported says the provider reported usage. Some OpenAI-compatible
// servers send none (or zeros), plain or streamed; a prompt is never
// zero tokens, so zeros mean "not reported" and the caller may estimate.
func (u Usage) Reported() bool { return u.PromptTokens > 0 || u.CompletionTokens > 0 }

// A Response is a model reply.
type Response struct {
	Content string
	// Reasoning is what the endpoint sent apart from the content as the
	// model's reasoning ("reasoning_content"), streamed or not; "" when
	// it sent none.
	Reasoning string
	// ToolCalls are the reply's native calls, in the order the endpoint
	// numbered them.
	ToolCalls []ToolCall
	// FinishReason is the provider's: "stop", "length" (cut by MaxTokens),
	// "content_filter", ... Empty when the provider sent none.
	FinishReason string
	Usage        Usage
	// Attempts made, 1 when the first succeeded.
	Attempts int
	// Duration of the whole call, waits included.
	Duration time.Duration
}

// A Client calls the chat completions endpoint of one profile. It is
// safe for concurrent use.
type Client struct {
	profile mcpgram.Profile
	opts    Options
	api     *openai.Client
	logger  *slog.Logger
	// noStreamUsage is set once the endpoint rejected stream_options.
	noStreamUsage atomic.Bool
}

// New returns a Client that calls p's model.
func New(p mcpgram.Profile, opts Options) (*Client, error) {
	if strings.TrimSpace(p.Model) == "" {
		return nil, errors.New("llm: model is required")
	}
	if p.BaseURL == "" {
		p.BaseURL = DefaultBaseURL
	}
	if p.Temperature < 0 || p.Temperature > 2 {
		return nil, fmt.Errorf("llm: temperature %v is outside 0..2", p.Temperature)
	}
	if p.MaxTokens < 0 {
		return nil, fmt.Errorf("llm: max tokens %d is negative", p.MaxTokens)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	} else if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if opts.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = DefaultMaxIdleConns
		t.MaxIdleConnsPerHost = DefaultMaxIdleConns
		opts.HTTPClient = &http.Client{Transport: t}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	oc := openai.DefaultConfig(p.APIKey)
	oc.BaseURL = strings.TrimRight(p.BaseURL, "/")
	oc.HTTPClient = headerDoer{opts.HTTPClient}
	return &Client{
		profile: p,
		opts:    opts,
		api:     openai.NewClientWithConfig(oc),
		logger:  opts.Logger.With("model", p.Model),
	}, nil
}

// Profile returns the client's profile, defaults filled in, without its
// APIKey: the key stays in the client, so that what is handed the
// profile (the agent, /model, a log line) never holds the secret.
func (c *Client) Profile() mcpgram.Profile {
	p := c.profile
	p.APIKey = ""
	return p
}

// Complete sends req and returns the reply. Transient failures are retried;
// the error left is an *Error, or ctx's error (wrapped) when ctx ended.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, req)
		if err == nil {
			resp.Attempts = attempt
			resp.Duration = time.Since(start)
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("model call: %w", context.Cause(ctx))
		}
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Kind: KindNetwork, Err: err}
		}
		e.Attempts = attempt
		if req.OnDelta != nil && e.Kind == KindBadRequest && !c.noStreamUsage.Load() &&
			strings.Contains(strings.ToLower(e.Message), "stream_options") {
			// Some OpenAI-compatible servers reject the option that asks
			// for usage in a stream: do without usage rather than fail.
			c.log(req).Warn("endpoint rejects stream_options; streaming without token usage", "err", e)
			c.noStreamUsage.Store(true)
			attempt--
			continue
		}
		if !e.Kind.Transient() || attempt > c.opts.MaxRetries {
			return nil, e
		}
		wait := c.backoff(attempt)
		if e.RetryAfter > 0 {
			if e.RetryAfter > c.opts.MaxWait {
				return nil, e
			}
			wait = e.RetryAfter
		}
		c.log(req).Warn("model call failed, retrying", "attempt", attempt, "wait", wait, "err", e)
		if req.OnRetry != nil {
			req.OnRetry(attempt, wait, e)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("model call: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// log is the logger for req's messages.
func (c *Client) log(req Request) *slog.Logger {
	if req.Logger != nil {
		return req.Logger.With("model", c.profile.Model)
	}
	return c.logger
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.Backoff << (attempt - 1)
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	return min(d, c.opts.MaxWait)
}

// errSilent cancels an attempt whose endpoint stopped answering;
// errAbandoned one whose stream is given up midway, so that closing it
// does not wait for the rest; errTooLong one whose reply passed its
// bound.
var (
	errSilent    = errors.New("model endpoint silent")
	errAbandoned = errors.New("stream abandoned")
	errTooLong   = errors.New("the reply passed its size bound")
)

// bound is how many bytes of text and arguments one reply may have.
func (c *Client) bound() int {
	if t := c.profile.MaxTokens; t > 0 && t < c.opts.MaxReplyBytes/BytesPerToken {
		return t * BytesPerToken
	}
	return c.opts.MaxReplyBytes
}

func (c *Client) attempt(ctx context.Context, req Request) (*Response, error) {
	info := &attemptInfo{bound: c.bound()}
	actx, cancel := context.WithCancelCause(context.WithValue(ctx, attemptKey{}, info))
	defer cancel(nil)
	// One timer serves as header timeout and stream idle timeout.
	timer := time.AfterFunc(c.opts.Timeout, func() { cancel(errSilent) })
	defer timer.Stop()

	resp, err := c.send(actx, req, func() { timer.Reset(c.opts.Timeout) }, func() { cancel(errAbandoned) })
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	if errors.Is(err, errTooLong) || info.tooLong.Load() {
		return nil, &Error{Kind: KindTooLong, Limit: info.bound, Read: int(info.read.Load()),
			Err: fmt.Errorf("reply cut at %d bytes of text and arguments, its bound", info.bound)}
	}
	if errors.Is(context.Cause(actx), errSilent) {
		return nil, &Error{Kind: KindTimeout, Err: fmt.Errorf("no answer within %s", c.opts.Timeout)}
	}
	return nil, scrub(classify(err, info.retryAfter()), c.profile.APIKey)
}

func (c *Client) openaiRequest(req Request) openai.ChatCompletionRequest {
	temp := c.profile.Temperature
	if req.Temperature != nil {
		temp = max(0, min(2, *req.Temperature))
	}
	if temp == 0 {
		// The field is omitempty: the smallest positive float is how a
		// zero temperature survives the encoding.
		temp = math.SmallestNonzeroFloat32
	}
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 {
			msgs[i].ToolCalls = openaiToolCalls(m.ToolCalls)
		}
		if len(m.Images) > 0 {
			msgs[i].Content, msgs[i].MultiContent = "", imageParts(m)
		}
	}
	out := openai.ChatCompletionRequest{
		Model:    c.profile.Model,
		Messages: msgs,
		//lint:ignore SA1019 max_tokens is what the OpenAI-compatible servers (Ollama, vLLM, DeepSeek, Groq) understand.
		MaxTokens:   c.profile.MaxTokens,
		Temperature: temp,
	}
	if len(req.Tools) > 0 {
		out.Tools = openaiTools(req.Tools)
		out.ParallelToolCalls = true
	}
	return out
}

func (c *Client) send(ctx context.Context, req Request, alive, abort func()) (*Response, error) {
	oreq := c.openaiRequest(req)
	if req.OnDelta == nil {
		return c.sendWhole(ctx, oreq)
	}

	if !c.noStreamUsage.Load() {
		oreq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	stream, err := c.api.CreateChatCompletionStream(ctx, oreq)
	if err != nil {
		return nil, err
	}
	finished := false
	defer func() {
		if !finished {
			abort()
		}
		stream.Close()
	}()
	alive()
	var b, reasoning strings.Builder
	var calls callAssembler
	out := &Response{}
	read, events, bound, ai := 0, 0, c.bound(), holder(ctx)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			// go-openai says EOF both after [DONE] and when the body just
			// ends: a proxy or server that gives up midway closes the
			// stream cleanly, and the half reply must not pass for whole.
			if out.FinishReason == "" && !streamDone(ctx) {
				return nil, errIncomplete
			}
			finished = true
			break
		}
		if err != nil {
			return nil, err
		}
		alive()
		if events++; events > bound+eventSlack {
			// Events that carry nothing, without end.
			ai.read.Store(int64(read))
			return nil, errTooLong
		}
		if chunk.Usage != nil {
			out.Usage = usage(chunk.Usage)
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		if ch.FinishReason != "" {
			out.FinishReason = string(ch.FinishReason)
		}
		read += len(ch.Delta.Content) + len(ch.Delta.ReasoningContent)
		for _, d := range ch.Delta.ToolCalls {
			read += len(d.ID) + len(d.Function.Name) + len(d.Function.Arguments)
		}
		if read > bound {
			// Nothing of the part past the bound is passed on.
			ai.read.Store(int64(read))
			return nil, errTooLong
		}
		reasoning.WriteString(ch.Delta.ReasoningContent)
		if ch.Delta.Content != "" {
			b.WriteString(ch.Delta.Content)
			req.OnDelta(ch.Delta.Content)
		}
		for _, d := range ch.Delta.ToolCalls {
			calls.add(d)
		}
	}
	out.Content, out.Reasoning = b.String(), reasoning.String()
	out.ToolCalls = calls.done()
	return out, nil
}

// sendWhole makes a call that does not stream: the reply comes whole, and
// is refused when it is past the bound.
func (c *Client) sendWhole(ctx context.Context, oreq openai.ChatCompletionRequest) (*Response, error) {
	r, err := c.api.CreateChatCompletion(ctx, oreq)
	if err != nil {
		return nil, err
	}
	out := &Response{Usage: usage(&r.Usage)}
	if len(r.Choices) > 0 {
		out.Content = r.Choices[0].Message.Content
		out.Reasoning = r.Choices[0].Message.ReasoningContent
		out.ToolCalls = toolCalls(r.Choices[0].Message.ToolCalls)
		out.FinishReason = string(r.Choices[0].FinishReason)
	}
	if n := replySize(out); n > c.bound() {
		holder(ctx).read.Store(int64(n))
		return nil, errTooLong
	}
	return out, nil
}

func usage(u *openai.Usage) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// errIncomplete is a stream that ended with neither a finish reason nor
// [DONE]: the connection was cut, so it is retried like a network error.
var errIncomplete = errors.New("the reply stream ended before the reply was complete (no finish reason, no [DONE])")

var doneMarker = regexp.MustCompile(`\ndata:[ \t]*\[DONE\]`)

// imageParts is m as the parts of a message with images: the text, then
// each image as a data URL.
func imageParts(m Message) []openai.ChatMessagePart {
	parts := []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.Content}}
	for _, img := range m.Images {
		url := "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: url}})
	}
	return parts
}
