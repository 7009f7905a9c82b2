package form

import (
	"strings"
	"unicode"
)

// What makes a field a secret, by the words of its name or title: any
// of codeWords or codePairs (a one-after-the-other pair of words), or,
// for a text, any of textWords or textPairs, or a word run together of
// several that holds one of textParts or ends in "token" (mypassword,
// clientsecret, accesstoken). A count of tokens (max_tokens), a choice
// or a yes/no is no secret.
var (
	codeWords = map[string]bool{"pin": true, "otp": true, "totp": true, "mfa": true, "2fa": true, "cvv": true, "cvc": true, "passcode": true}
	codePairs = map[[2]string]bool{{"security", "code"}: true, {"auth", "code"}: true, {"verification", "code"}: true, {"one", "time"}: true}
	textWords = map[string]bool{
		"password": true, "passwd": true, "pwd": true, "passphrase": true, "passwort": true, "secret": true,
		"token": true, "apikey": true, "privatekey": true, "mnemonic": true,
	}
	textPairs = map[[2]string]bool{
		{"api", "key"}: true, {"private", "key"}: true, {"secret", "key"}: true, {"access", "key"}: true,
		{"seed", "phrase"}: true, {"recovery", "phrase"}: true,
	}
	textParts = []string{"password", "passwd", "passphrase", "passcode", "secret", "apikey", "privatekey"}
)

// Secret reports whether the field asks for a secret: a password, a
// token, a PIN, a key. It does by its format ("password", which the
// schema allows a string to declare) or by the words of its name or title
// (password, passphrase, token, secret, pin, api_key, otp and their kin,
// in any case and in snake, kebab or camel case). A front end then warns
// who asks for it and never shows its value back.
func (f Field) Secret() bool {
	text := f.Kind == Text
	if text && strings.EqualFold(f.Format, "password") {
		return true
	}
	if !text && f.Kind != Number && f.Kind != Integer {
		return false
	}
	for _, s := range []string{f.Name, f.Title} {
		w := words(s)
		for i, word := range w {
			var pair [2]string
			if i > 0 {
				pair = [2]string{w[i-1], word}
			}
			if codeWords[word] || codePairs[pair] || (text && (textWords[word] || textPairs[pair] || runTogether(word))) {
				return true
			}
		}
	}
	return false
}

// runTogether reports whether word, several run together, holds a secret.
func runTogether(word string) bool {
	for _, part := range textParts {
		if strings.Contains(word, part) {
			return true
		}
	}
	return strings.HasSuffix(word, "token")
}

// words splits s into lower-case words at every character that is no
// letter or digit and where a lower-case letter meets an upper-case one
// (apiKey, APIKey: api, key).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}
