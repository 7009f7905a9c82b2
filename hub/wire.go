package hub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcpgram/mcpgram"
)

// wireContent is one content part as any MCP version sends it, decoded
// loosely so that one part of a kind we don't know spoils nothing else.
type wireContent struct {
	Type     string        `json:"type"`
	Text     string        `json:"text"`
	Data     string        `json:"data"`
	MIMEType string        `json:"mimeType"`
	URI      string        `json:"uri"`
	Name     string        `json:"name"`
	Resource *wireResource `json:"resource"`
}

type wireResource struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     string  `json:"blob"`
	// Meta is kept raw: a _meta of the wrong kind must not spoil the
	// contents it came with.
	Meta json.RawMessage `json:"_meta"`
}

// pageMeta is the _meta.ui of r, as decoded from JSON; nil when r has
// none, or a _meta that is not an object.
func (r wireResource) pageMeta() any {
	var meta map[string]any
	if json.Unmarshal(r.Meta, &meta) != nil {
		return nil
	}
	return meta[MetaUI]
}

func (r wireResource) content() mcpgram.Content {
	c := mcpgram.Content{Type: mcpgram.ContentResource, URI: r.URI, MIMEType: r.MIMEType}
	if r.Text != nil {
		c.Text = *r.Text
	} else if r.Blob != "" {
		data, err := base64.StdEncoding.DecodeString(r.Blob)
		if err != nil {
			c.Text = fmt.Sprintf("[resource %s: undecodable blob]", r.URI)
		}
		c.Data = data
	}
	return c
}

// decodeCallResult turns the raw result of tools/call into a Result.
func decodeCallResult(raw json.RawMessage) (*mcpgram.Result, error) {
	var w struct {
		Content           []json.RawMessage `json:"content"`
		IsError           bool              `json:"isError"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	res := &mcpgram.Result{IsError: w.IsError, Structured: compactJSON(w.StructuredContent)}
	for _, part := range w.Content {
		res.Content = append(res.Content, decodeContent(part))
	}
	// A result with structured content only still has to say something.
	if len(res.Content) == 0 && len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
		res.Content = append(res.Content, mcpgram.Content{Type: mcpgram.ContentText, Text: string(w.StructuredContent)})
	}
	return res, nil
}

func decodeContent(raw json.RawMessage) mcpgram.Content {
	var w wireContent
	if err := json.Unmarshal(raw, &w); err != nil {
		return mcpgram.Content{Type: "unknown", Text: "[content the server sent malformed]"}
	}
	switch w.Type {
	case mcpgram.ContentText:
		return mcpgram.Content{Type: mcpgram.ContentText, Text: w.Text}
	case mcpgram.ContentImage, mcpgram.ContentAudio:
		data, err := base64.StdEncoding.DecodeString(w.Data)
		if err != nil {
			return mcpgram.Content{Type: w.Type, MIMEType: w.MIMEType, Text: fmt.Sprintf("[%s with undecodable data]", w.Type)}
		}
		return mcpgram.Content{Type: w.Type, Data: data, MIMEType: w.MIMEType}
	case mcpgram.ContentResource:
		if w.Resource == nil {
			return mcpgram.Content{Type: mcpgram.ContentResource, Text: "[embedded resource without contents]"}
		}
		return w.Resource.content()
	case mcpgram.ContentResourceLink:
		return mcpgram.Content{Type: mcpgram.ContentResourceLink, URI: w.URI, Name: w.Name, MIMEType: w.MIMEType}
	default:
		// Keep the type so a front end can tell, and a note so the model
		// knows something was left out.
		return mcpgram.Content{Type: w.Type, Text: fmt.Sprintf("[content of unsupported type %q omitted]", w.Type)}
	}
}

// decodeReadResult turns the raw result of resources/read into a Result,
// with what an MCP App's page declares of itself, and notes on what of
// that it ignored.
func decodeReadResult(raw json.RawMessage) (*mcpgram.Result, []string, error) {
	var w struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, nil, fmt.Errorf("decode result: %w", err)
	}
	res := &mcpgram.Result{}
	var notes []string
	for _, part := range w.Contents {
		var r wireResource
		if err := json.Unmarshal(part, &r); err != nil {
			res.Content = append(res.Content, mcpgram.Content{Type: mcpgram.ContentResource, Text: "[resource contents the server sent malformed]"})
			continue
		}
		c := r.content()
		var more []string
		c.App, more = appPage(r.URI, r.pageMeta())
		notes = append(notes, more...)
		res.Content = append(res.Content, c)
	}
	return res, notes, nil
}
