package memory_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/mcp-servers/mcp-memory/internal/memory"
)

func TestDetectPersonal(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		// the examples, and disguises
		{"The user resides at 12 Baker Street, London and was born 1990-04-02", true},
		{"Resident of 12 Baker Street", true},
		{"Ich wohne in Berlin, meine Frau heißt Anna", true},
		{"Wohnhaft Hauptstraße 5, Berlin", true},
		{"J'habite à Lyon", true},
		{"Me llamo Ana", true},
		{"M\u200by birthday is in May", true},
		{"p\u00adr\u200de\u2060fers tea", true},
		{"\uff2d\uff59 cat is Tom", true}, // full-width "My"
		// preferences
		{"I prefer dark mode", true},
		{"User prefers tea over coffee", true},
		{"Likes sushi", true},
		{"She LOVES jazz", true},
		{"hates mornings", true},
		{"Favourite colour: blue", true},
		{"favorite band is Queen", true},
		{"enjoys hiking on weekends", true},
		// first person
		{"My cat is called Tom", true},
		{"I am a nurse", true},
		{"I'm vegetarian", true},
		{"I\u2019m left-handed", true},
		{"i   am   fine", true},
		{"Remind me to water the plants", true},
		{"I work night shifts", true},
		// identity and contacts
		{"Birthday: 3 May", true},
		{"Her name is Anna", true},
		{"Lives in Berlin", true},
		{"Home address: 221B Baker Street", true},
		{"Phone: +44 20 7946 0958", true},
		{"Call (555) 123-4567 after six", true},
		{"555.123.4567", true},
		{"07911123456", true},
		{"Card 4111 1111 1111 1111", true},
		{"Reach Bob at bob.smith@example.co.uk", true},
		{"email: someone", true},
		{"Is 34 years old", true},
		{"Allergic to peanuts", true},
		{"has a peanut allergy", true},
		{"Wife's name: Maria", true},
		{"Password hint: first dog", true},
		// neutral facts
		{"The Eiffel Tower is 330 metres tall", false},
		{"Project Apollo deploys every Friday at 18:00 UTC", false},
		{"Water boils at 100 °C at sea level", false},
		{"The meeting on 2026-11-21 moved to room 4", false},
		{"Release 1.24.3 fixed the parser", false},
		{"The NAS answers on 192.168.100.200", false},
		{"Pi is about 3.14159265358979", false},
		{"Myanmar's capital is Naypyidaw", false},
		{"Rain is unlikely tomorrow", false},
		{"The alike-named files were merged", false},
		{"Mercury is the smallest planet", false},
		{"Tokyo has about 14 million inhabitants", false},
		{"Build with make build; binaries go to bin/", false},
		{"Deadline for the tax return is 31/07/2026", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			match, got := memory.DetectPersonal(tt.text)
			if got != tt.want {
				t.Errorf("DetectPersonal(%q) = %v (match %q), want %v", tt.text, got, match, tt.want)
			}
			if got && match == "" {
				t.Errorf("DetectPersonal(%q) found something but names no match", tt.text)
			}
		})
	}
}

func FuzzDetectPersonal(f *testing.F) {
	f.Add("I prefer tea")
	f.Add("+44 20 7946 0958 and 2026-11-21")
	f.Fuzz(func(t *testing.T, text string) {
		match, found := memory.DetectPersonal(text)
		if found == (match == "") {
			t.Errorf("DetectPersonal(%q) = %q, %v: a finding must name its match", text, match, found)
		}
	})
}
