package mcpgram

import (
	"context"
	"strings"
)

// A Caller identifies who a call is made for. The hub passes it to the
// server in the request's _meta, never as a tool argument that the model
// could forge.
type Caller struct {
	// UserID is the Telegram user id in decimal, or an operator name such
	// as "local" for the terminal and the CLI.
	UserID string
	// ChatID names the conversation: the Telegram chat id in decimal,
	// followed, for a forum's topic kept as a conversation of its own, by
	// "/" and the topic's id ("-1001234/7"); or "local".
	ChatID string
	// Consent is set only for a call the user approved on its own card,
	// having seen its arguments: servers read it as the user's consent to
	// that very call (see hub.MetaConsentWhen).
	Consent bool
}

// Content types of a result part.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"      // embedded resource: Text or Data, with URI
	ContentResourceLink = "resource_link" // a link: URI, Name
)

// A Content is one part of a tool result or resource read.
type Content struct {
	Type     string
	Text     string
	Data     []byte // decoded bytes of an image, audio or blob resource
	MIMEType string
	URI      string
	Name     string
	// App is what a resource read's MCP App page declares of itself
	// (its _meta.ui), nil when it declares nothing.
	App *AppPage
}

// A Result is what a tool call or resource read returned.
type Result struct {
	Content []Content
	// IsError is the tool's own isError flag: the call reached the tool
	// and the tool reported failure.
	IsError bool
	// Structured is the result's structuredContent as compact JSON, nil
	// when it has none; checked against the tool's output schema, if it
	// declares one.
	Structured []byte
}

// Text joins the text of every text part and embedded text resource.
func (r *Result) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// Images returns the image parts of r.
func (r *Result) Images() []Content {
	return r.parts(func(c Content) bool { return c.Type == ContentImage })
}

// Files returns the parts a person opens as files: embedded resources
// given as bytes (blobs), and audio.
func (r *Result) Files() []Content {
	return r.parts(func(c Content) bool {
		return (c.Type == ContentResource || c.Type == ContentAudio) && len(c.Data) > 0
	})
}

// Links returns the resource links of r.
func (r *Result) Links() []Content {
	return r.parts(func(c Content) bool { return c.Type == ContentResourceLink && c.URI != "" })
}

func (r *Result) parts(keep func(Content) bool) []Content {
	var out []Content
	for _, c := range r.Content {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// A PromptMessage is one message of a prompt: its role ("user" or
// "assistant") and one content part (text, image, audio or an embedded
// resource; a resource_link as its URI and name).
type PromptMessage struct {
	Role    string
	Content Content
}

// A PromptResult is what prompts/get returned.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// A Progress is what a server reported of a call's progress.
type Progress struct {
	// Progress is how far the call has got, and Total what it will reach
	// when done (0: not known). Both are the server's numbers.
	Progress float64
	Total    float64
	// Message is the server's word on what it is doing: one line of at
	// most MaxProgressMessage bytes, as the server wrote it otherwise
	// (untrusted).
	Message string
}

// MaxProgressMessage bounds a progress message, in bytes.
const MaxProgressMessage = 200

// A ProgressFunc receives a call's progress. It runs on the connection's
// read loop, perhaps for several calls at once: it must return at once,
// keeping what it needs (the latest report, say), never calling the hub.
type ProgressFunc func(Progress)

type progressKey struct{}

// WithProgress returns ctx carrying f, which the calls made with it
// (CallTool, ReadResource) give what their server reports of their
// progress.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// ProgressOf returns the ProgressFunc ctx carries (see WithProgress),
// nil if none.
func ProgressOf(ctx context.Context) ProgressFunc {
	f, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return f
}
