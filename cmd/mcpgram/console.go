package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/spf13/cobra"
)

// A console is what a command talks to the operator through: its
// streams and the environment it was started with, and, once the
// command's flags are read, its configuration.
type console struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
	cfg            *config.Config // nil until configured reads it
}

// configured makes a command's run from f, which is given a copy of the
// console holding the configuration as the command's flags, the
// environment and the files make it.
func (c console) configured(f func(con console, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := config.Load(cmd.Flags(), c.getenv)
		if err != nil {
			return fmt.Errorf("configuration: %w", err)
		}
		if protectSecrets != nil {
			protectSecrets(cfg)
		}
		c.cfg = cfg
		return f(c, args)
	}
}

// interactive reports whether someone is there to sign in in a browser
// or answer a question: stdin is a terminal, or $BROWSER names a program.
func (c console) interactive() bool {
	browser, _ := c.getenv("BROWSER")
	return isTerminal(c.stdin) || strings.TrimSpace(browser) != ""
}
