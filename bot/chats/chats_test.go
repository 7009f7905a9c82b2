package chats_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

func TestIsGroup(t *testing.T) {
	for _, c := range []struct {
		chat string
		want bool
	}{{"-100123", true}, {"-5", true}, {"-1001/7", true}, {"42", false}, {"local", false}} {
		if got := chats.IsGroup(c.chat); got != c.want {
			t.Errorf("IsGroup(%q) = %v, want %v", c.chat, got, c.want)
		}
	}
}

// A key names a place, and the place's String is its key again; a
// topic's key names its chat.
func TestKeys(t *testing.T) {
	for _, c := range []struct {
		key  string
		chat string
		at   telegram.Place
		ok   bool
	}{
		{"42", "42", telegram.In(42), true},
		{"-1001", "-1001", telegram.In(-1001), true},
		{"-1001/7", "-1001", telegram.Place{Chat: -1001, Topic: 7}, true},
		{"-1001/0", "-1001", telegram.Place{}, false},
		{"-1001/x", "-1001", telegram.Place{}, false},
		{"local", "local", telegram.Place{}, false},
	} {
		t.Run(c.key, func(t *testing.T) {
			if got := chats.Of(c.key); got != c.chat {
				t.Errorf("Of(%q) = %q, want %q", c.key, got, c.chat)
			}
			at, ok := chats.PlaceOf(c.key)
			if at != c.at || ok != c.ok {
				t.Fatalf("PlaceOf(%q) = %v, %v, want %v, %v", c.key, at, ok, c.at, c.ok)
			}
			if ok && at.String() != c.key {
				t.Errorf("PlaceOf(%q).String() = %q", c.key, at.String())
			}
		})
	}
	if got, want := chats.Key(-1001), "-1001"; got != want {
		t.Errorf("Key(-1001) = %q, want %q", got, want)
	}
}
