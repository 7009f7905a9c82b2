package clock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/mcp-servers/mcp-clock/internal/clock"
)

// now is a Saturday evening in UTC, already Sunday morning in Tokyo.
var now = time.Date(2026, 11, 21, 21, 30, 15, 500, time.UTC)

func TestCurrentTime(t *testing.T) {
	tests := []struct {
		zone string
		want []string
	}{
		{"Europe/Berlin", []string{"Time zone: Europe/Berlin", "RFC 3339: 2026-11-21T22:30:15+01:00", "Weekday: Saturday", "Human: Saturday, 21 November 2026, 22:30:15 CET (UTC+01:00)"}},
		{"Asia/Tokyo", []string{"RFC 3339: 2026-11-22T06:30:15+09:00", "Weekday: Sunday"}},
		{"Asia/Kolkata", []string{"2026-11-22T03:00:15+05:30"}},
		{"America/New_York", []string{"2026-11-21T16:30:15-05:00", "EST"}},
		{"", []string{"Time zone: UTC", "RFC 3339: 2026-11-21T21:30:15Z"}},
		{" utc ", []string{"Time zone: UTC"}},
		{"GMT", []string{"Time zone: UTC"}},
	}
	for _, tt := range tests {
		t.Run(tt.zone, func(t *testing.T) {
			got, err := clock.CurrentTime(now, tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("CurrentTime(%q) =\n%s\nwant it to contain %q", tt.zone, got, w)
				}
			}
		})
	}
}

func TestBadZone(t *testing.T) {
	for _, zone := range []string{"Mars/Olympus", "Local", "../../etc/passwd", "/etc/localtime", "europe/berlin", "CEST+1"} {
		t.Run(zone, func(t *testing.T) {
			_, err := clock.CurrentTime(now, zone)
			var ce *clock.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"Europe/Berlin"`) || !strings.Contains(err.Error(), zone) {
				t.Errorf("CurrentTime(%q) error = %v, want one naming the zone and an example", zone, err)
			}
			if _, err := clock.Convert(now, "12:00", "UTC", zone); err == nil {
				t.Errorf("Convert to %q succeeded", zone)
			}
			if _, err := clock.Convert(now, "12:00", zone, "UTC"); err == nil {
				t.Errorf("Convert from %q succeeded", zone)
			}
		})
	}
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name            string
		input, from, to string
		want            []string
	}{
		{"date and time, winter", "2026-11-21 15:04", "America/New_York", "Europe/Berlin", []string{
			"Saturday 2026-11-21 15:04 in America/New_York (EST, UTC-05:00)",
			"is Saturday 2026-11-21 21:04 in Europe/Berlin (CET, UTC+01:00)",
			"RFC 3339: 2026-11-21T21:04:00+01:00",
			"Europe/Berlin is 6 hours ahead of America/New_York.",
		}},
		{"summer time on both sides", "2026-07-01 12:00", "America/New_York", "Europe/Berlin", []string{
			"is Wednesday 2026-07-01 18:00 in Europe/Berlin (CEST, UTC+02:00)",
		}},
		{"with seconds and T", "2026-07-01T12:00:30", "UTC", "America/Los_Angeles", []string{
			"is Wednesday 2026-07-01 05:00:30 in America/Los_Angeles (PDT, UTC-07:00)",
			"7 hours behind UTC",
		}},
		{"RFC 3339 carries its own offset", "2026-11-21T23:30:00Z", "Europe/Berlin", "Asia/Tokyo", []string{
			"Saturday 2026-11-21 23:30 in UTC+00:00\n",
			"is Sunday 2026-11-22 08:30 in Asia/Tokyo (JST, UTC+09:00)",
		}},
		{"time of day is today in the source zone", "12:00", "Asia/Tokyo", "Asia/Kolkata", []string{
			"Sunday 2026-11-22 12:00 in Asia/Tokyo",
			"is Sunday 2026-11-22 08:30 in Asia/Kolkata (IST, UTC+05:30)",
			"Asia/Kolkata is 3 h 30 min behind Asia/Tokyo.",
		}},
		{"12-hour clock", "3:30 pm", "", "Asia/Kathmandu", []string{
			"Saturday 2026-11-21 15:30 in UTC",
			"is Saturday 2026-11-21 21:15 in Asia/Kathmandu (UTC+05:45)",
		}},
		{"same zone", "09:00", "UTC", "Etc/UTC", []string{"have the same time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := clock.Convert(now, tt.input, tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Convert(%q, %q, %q) =\n%s\nwant it to contain %q", tt.input, tt.from, tt.to, got, w)
				}
			}
		})
	}
}

func TestConvertBadTime(t *testing.T) {
	for _, input := range []string{"", "tomorrow", "25:00", "2026-13-01 10:00", "12.00"} {
		_, err := clock.Convert(now, input, "UTC", "Asia/Tokyo")
		var ce *clock.Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "15:30") {
			t.Errorf("Convert(%q) error = %v, want one with an example", input, err)
		}
	}
}
