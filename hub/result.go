package hub

import "strings"

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
	// that very call (see MetaConsentWhen).
	Consent bool
}

// The _meta keys under which the hub sends the caller to a server.
const (
	MetaUserID = "mcpgram/user_id"
	MetaChatID = "mcpgram/chat_id"
	// MetaConsent is true on a call the user approved on its card.
	MetaConsent = "mcpgram/consent"
)

// MetaConsentWhen is the key, in a tool definition's _meta, of the calls
// that need the user's own consent: an object from argument name to the
// values that need it, such as {"operation": ["store"]}; {} means every
// call. mcpgram asks the user before each such call, whatever autoApprove
// says, and sends it with MetaConsent once the user agreed.
const MetaConsentWhen = "mcpgram/consent_when"

// MetaPerUser is the key, in a tool definition's _meta, of a tool that
// acts for the calling user (the one in MetaUserID): true says its
// results are that user's alone, as the memory server's are. In a group,
// mcpgram keeps such results out of the other members' turns. Anything
// but false declares it too: the safe side of a server's mistake.
const MetaPerUser = "mcpgram/per_user"

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
