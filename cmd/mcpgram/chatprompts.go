package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
)

// The servers' prompts in the terminal chat: /prompts lists them under
// the names Telegram's menu gives them, /NAME asks a prompt's arguments
// like a server's form and sends its messages as the operator's turn.

// chatOwnCommands are the terminal's commands, which no prompt takes.
var chatOwnCommands = []string{"reset", "tools", "prompts", "help", "quit", "exit"}

// prompts are the prompts the chat may use, as commands.
func (c *terminal) prompts() []promptmenu.Command {
	return promptmenu.Commands(c.hub.Catalog(), chatOwnCommands)
}

func (c *terminal) listPrompts() {
	cmds := c.prompts()
	if len(cmds) == 0 {
		fmt.Fprintln(c.out, "No server offers prompts.")
		return
	}
	for _, cmd := range cmds {
		fmt.Fprintf(c.out, "/%s\t%s: %s\n", cmd.Name, plain(cmd.Server, 100), plain(cmd.Description, 100))
	}
}

// sendPrompt asks the arguments of cmd's prompt, gets it, shows what it
// says and runs it as a turn. A prompt the server fails is said so; only
// a failure of the terminal ends the chat.
func (c *terminal) sendPrompt(ctx context.Context, cmd promptmenu.Command) error {
	p, err := agent.NewPrompts(c.agent).Prompt(ctx, c.caller, cmd.Server, cmd.Prompt)
	if errors.Is(err, agent.ErrNoPrompt) {
		fmt.Fprintln(c.out, "That prompt is not available right now.")
		return nil
	}
	if err != nil {
		return err
	}
	args := map[string]string{}
	if len(p.Arguments) > 0 {
		f, err := agent.PromptForm(p)
		if err != nil {
			fmt.Fprintf(c.out, "The prompt's arguments cannot be asked: %s.\n", plain(err.Error(), 300))
			return nil
		}
		fmt.Fprintf(c.out, "Prompt %s of %s:\n", plain(p.Name, 100), plain(cmd.Server, 100))
		res, err := c.asker.fill(ctx, f, true)
		if err != nil || res.Action != mcpgram.ElicitAccept {
			fmt.Fprintln(c.out, "Not sent.")
			return nil
		}
		for k, v := range res.Content {
			args[k], _ = v.(string)
		}
	}
	in, err := agent.NewPrompts(c.agent).GetPrompt(ctx, c.caller, cmd.Server, cmd.Prompt, args)
	if err != nil {
		fmt.Fprintf(c.out, "%s could not give the prompt %s: %s\n", plain(cmd.Server, 100), plain(cmd.Prompt, 100), plain(err.Error(), 300))
		return nil
	}
	fmt.Fprintf(c.out, "(sent the prompt %s of %s:)\n%s\n", plain(cmd.Prompt, 100), plain(cmd.Server, 100), indent(plain(in.Text, maxShown)))
	if len(in.Images) > 0 {
		fmt.Fprintf(c.out, "(and %d images)\n", len(in.Images))
	}
	return c.turn(ctx, agent.Request{Caller: c.caller, Text: in.Text, Images: in.Images, Exempt: true}, c.interrupts)
}
