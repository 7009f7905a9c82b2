// Package startlink is the codec of the payloads of the bot's deep links,
// https://t.me/<bot>?start=<payload>, which open the user's private chat
// with the bot and send it "/start <payload>". Anyone may send any
// payload, and anyone who sees a link may open it, so the payload is
// hostile input: it carries an id, never a secret, and Parse accepts
// only what its encoders produce. Telegram allows 1 to 64 characters of
// A-Z a-z 0-9 _ -; the encoders never write more.
//
// The wire forms are:
//
//	f<form id>   open a form asked in a group in the user's private chat
//	             (decimal, no leading zero, above 0)
//
// Authorisation is not the codec's business: whoever acts on a payload
// checks who sent it.
package startlink

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// MaxLen is Telegram's limit on a start payload, in characters.
const MaxLen = 64

// ErrInvalid is Parse's answer to a payload that is none of the bot's.
var ErrInvalid = errors.New("startlink: not a payload of this bot")

// A Payload is what a deep link asks for.
type Payload struct {
	// Form is the id of the form to open in the private chat.
	Form int64
}

// Form is the payload that opens form id in its user's private chat.
func Form(id int64) string { return Payload{Form: id}.String() }

// String encodes p.
func (p Payload) String() string { return "f" + strconv.FormatInt(p.Form, 10) }

// URL is the deep link to bot (its username) that sends payload.
func URL(bot, payload string) string {
	return "https://t.me/" + url.PathEscape(bot) + "?start=" + payload
}

// Parse reads a payload as String wrote it.
func Parse(s string) (Payload, error) {
	if len(s) < 2 || len(s) > MaxLen || !allowed(s) {
		return Payload{}, ErrInvalid
	}
	digits, ok := strings.CutPrefix(s, "f")
	if !ok || digits[0] == '0' || strings.Trim(digits, "0123456789") != "" {
		return Payload{}, ErrInvalid
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return Payload{}, ErrInvalid
	}
	return Payload{Form: id}, nil
}

// allowed reports whether s holds only the characters Telegram allows in
// a start payload.
func allowed(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}
