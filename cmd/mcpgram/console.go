package main

import (
	"io"
	"strings"
)

// A console is what a command talks to the operator through: its
// streams and the environment it was started with.
type console struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
}

// interactive reports whether someone is there to sign in in a browser
// or answer a question: stdin is a terminal, or $BROWSER names a program.
func (c console) interactive() bool {
	browser, _ := c.getenv("BROWSER")
	return isTerminal(c.stdin) || strings.TrimSpace(browser) != ""
}
