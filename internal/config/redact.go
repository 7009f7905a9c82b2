package config

import (
	"bytes"
	"io"
	"net/url"
	"slices"
	"sync"
)

// A Redactor is the last line of defence for secrets in the log: it
// replaces every secret in what is written through it with [redacted]. It
// sits under the log handler, so it sees each record whole, after every
// attribute and error has been formatted, whichever component logged it.
type Redactor struct {
	mu      sync.Mutex
	w       io.Writer
	secrets [][]byte
}

// minSecret is the shortest value redacted: a shorter one would mangle
// ordinary words of the log.
const minSecret = 6

// NewRedactor returns w with secrets removed from what is written to it.
// The log handlers write one record per Write, so a secret never spans two.
func NewRedactor(w io.Writer, secrets []string) io.Writer {
	r := &Redactor{w: w}
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		// A secret may reach the log as part of a URL, escaped.
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !slices.ContainsFunc(r.secrets, func(b []byte) bool { return string(b) == form }) {
				r.secrets = append(r.secrets, []byte(form))
			}
		}
	}
	if len(r.secrets) == 0 {
		return w
	}
	return r
}

func (r *Redactor) Write(p []byte) (int, error) {
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, []byte("[redacted]"))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
