package hub

import (
	"net/url"
	"strings"
)

// scrub hides the credentials and query of a remote server's URL (which
// may hold an expanded ${env:VAR}) in text bound for the log, the status
// or the model.
func (c config) scrub(s string) string {
	if c.oauth.ClientSecret != "" {
		s = strings.ReplaceAll(s, c.oauth.ClientSecret, "***")
	}
	if c.url == "" {
		return s
	}
	safe := safeURL(c.url)
	s = strings.ReplaceAll(s, c.url, safe)
	u, err := url.Parse(c.url)
	if err != nil {
		return s
	}
	// net/http quotes the URL with the password as ***, so the whole URL
	// may not match: hide its parts too.
	s = strings.ReplaceAll(s, u.Redacted(), safe)
	if u.RawQuery != "" {
		s = strings.ReplaceAll(s, "?"+u.RawQuery, "")
		s = strings.ReplaceAll(s, u.RawQuery, "")
	}
	if pw, ok := u.User.Password(); ok && pw != "" {
		s = strings.ReplaceAll(s, pw, "***")
	}
	return s
}

// scrubErr is scrub for an error, keeping what errors.Is and errors.As find.
func (c config) scrubErr(err error) error {
	if msg := c.scrub(err.Error()); msg != err.Error() {
		return &scrubbedError{msg: msg, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

func (e *scrubbedError) Unwrap() error { return e.err }

// safeURL is raw without user info, query or fragment.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}
