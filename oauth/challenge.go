package oauth

import (
	"net/http"
	"strings"
)

// A Challenge is a Bearer challenge of a WWW-Authenticate header (RFC 6750
// §3, RFC 9728 §5.1): where the resource's metadata is, the scope it
// wants, and the error, such as insufficient_scope.
type Challenge struct {
	ResourceMetadata string
	Scope            []string
	Error            string
}

// ParseChallenge returns the first Bearer challenge of h's
// WWW-Authenticate headers, and whether there is one.
func ParseChallenge(h http.Header) (Challenge, bool) {
	for _, line := range h.Values("WWW-Authenticate") {
		if params, ok := bearerParams(line); ok {
			return Challenge{
				ResourceMetadata: params["resource_metadata"],
				Scope:            fields(params["scope"]),
				Error:            params["error"],
			}, true
		}
	}
	return Challenge{}, false
}

// bearerParams parses the auth-params of the Bearer challenge in one
// header line, which may hold other challenges before or after it.
func bearerParams(line string) (map[string]string, bool) {
	var params map[string]string
	in := false
	s := line
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return params, params != nil
		}
		tok, rest := token(s)
		if tok == "" {
			return params, params != nil // not a header we can read further
		}
		after := strings.TrimLeft(rest, " \t")
		if !strings.HasPrefix(after, "=") {
			// A scheme starts a new challenge.
			if in {
				return params, true
			}
			in = strings.EqualFold(tok, "Bearer")
			if in {
				params = map[string]string{}
			}
			s = rest
			continue
		}
		value, rest2 := paramValue(strings.TrimLeft(after[1:], " \t"))
		if in {
			params[strings.ToLower(tok)] = value
		}
		s = rest2
	}
}

// token returns the leading RFC 9110 token of s and what follows.
func token(s string) (string, string) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/", c) >= 0
}

// paramValue reads a token or a quoted string, unescaping it.
func paramValue(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		return token(s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}
