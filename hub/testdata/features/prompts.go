package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Prompts, for the tests of prompts in the hub and the front ends:
//   - greet (who required, with suggestions; mood optional): one user
//     message saying who and how;
//   - picture: a text, an image and an embedded resource;
//   - huge: one text message of FEATURES_HUGE_PROMPT bytes (default 1 MB);
//   - broken: prompts/get fails;
//   - flood: its argument "word" completes to 1,000 values;
//   - a prompt whose name holds a line break, and one of 200 characters,
//     which a client must refuse;
//   - FEATURES_PROMPTS=N adds prompts p001 … pN, for a long menu.
//
// The tool "add_prompt" adds a prompt named by its argument, so that a
// client sees prompts/list_changed.

// tinyPNG is a 1×1 PNG.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// promptOptions are the server options prompts need.
func promptOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithPromptCapabilities(true), server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{}),
	}
}

func addPrompts(s *server.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptTitle("Greet someone"), mcp.WithPromptDescription("Writes a greeting."),
		mcp.WithArgument("who", mcp.ArgumentDescription("Whom to greet"), mcp.RequiredArgument()),
		mcp.WithArgument("mood", mcp.ArgumentDescription("How"))),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			who, mood := req.Params.Arguments["who"], req.Params.Arguments["mood"]
			text := "Please greet " + who
			if mood != "" {
				text += ", " + mood
			}
			return mcp.NewGetPromptResult("A greeting", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text+"."))}), nil
		})
	s.AddPrompt(mcp.NewPrompt("picture", mcp.WithPromptDescription("A text, an image and a resource.")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Describe this picture.")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(tinyPNG, "image/png")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "notes://style", MIMEType: "text/plain", Text: "Be brief."})),
			}), nil
		})
	s.AddPrompt(mcp.NewPrompt("huge", mcp.WithPromptDescription("One very long message.")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			n := 1 << 20
			if v, err := strconv.Atoi(os.Getenv("FEATURES_HUGE_PROMPT")); err == nil {
				n = v
			}
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(strings.Repeat("x", n)))}), nil
		})
	s.AddPrompt(mcp.NewPrompt("broken", mcp.WithPromptDescription("Always fails.")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return nil, errors.New("the prompt store is on fire")
		})
	s.AddPrompt(mcp.NewPrompt("flood", mcp.WithPromptDescription("Its word completes to 1,000 values."),
		mcp.WithArgument("word", mcp.RequiredArgument())),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("The word is "+req.Params.Arguments["word"]))}), nil
		})
	echo := func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("prompt "+req.Params.Name))}), nil
	}
	s.AddPrompt(mcp.NewPrompt("bad\nname"), echo)
	s.AddPrompt(mcp.NewPrompt(strings.Repeat("n", 200)), echo)
	n, _ := strconv.Atoi(os.Getenv("FEATURES_PROMPTS"))
	for i := 1; i <= n; i++ {
		s.AddPrompt(mcp.NewPrompt(fmt.Sprintf("p%03d", i), mcp.WithPromptDescription("Prompt number "+strconv.Itoa(i))), echo)
	}
	s.AddTool(mcp.NewTool("add_prompt", mcp.WithDescription("Adds a prompt of the given name."), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddPrompt(mcp.NewPrompt(req.GetString("name", "")), echo)
			return mcp.NewToolResultText("added"), nil
		})
}

// completer suggests values of the prompts' arguments: names for greet's
// who (those starting with what is typed), moods, and 1,000 words for
// flood (a hostile server's flood).
type completer struct{}

func (completer) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	var all []string
	switch prompt + "." + arg.Name {
	case "greet.who":
		all = []string{"Ada", "Alan", "Grace", "Linus", "Ken", "Rob", "Dennis"}
	case "greet.mood":
		all = []string{"warmly", "briefly"}
	case "flood.word":
		for i := range 1000 {
			all = append(all, fmt.Sprintf("word%04d", i))
		}
		all = append([]string{"line\nbreak", strings.Repeat("w", 300)}, all...)
	}
	var out []string
	for _, v := range all {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(arg.Value)) {
			out = append(out, v)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}, nil
}
