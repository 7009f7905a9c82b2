// Package clock tells the time in IANA time zones and converts times between
// them, and serves both as MCP tools.
package clock

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zones work in images without /usr/share/zoneinfo
)

// An Error explains, in words for the user, why a request has no answer.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func errorf(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// LoadZone returns the IANA time zone name; empty means UTC, and "UTC",
// "GMT" and "Z" are accepted in any case. "Local" is refused: the server's
// own zone says nothing about the user's.
func LoadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch strings.ToUpper(name) {
	case "", "UTC", "GMT", "Z", "ETC/UTC":
		return time.UTC, nil
	case "LOCAL":
		return nil, errorf("time zone %q is the server's own and says nothing about the user's: %s", name, zoneHint)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errorf("unknown time zone %q: %s", name, zoneHint)
	}
	return loc, nil
}

const zoneHint = `use an IANA name such as "Europe/Berlin", "America/New_York", "Asia/Tokyo" or "UTC"`

// CurrentTime describes now in the zone: RFC 3339, the weekday and a form
// for people.
func CurrentTime(now time.Time, zone string) (string, error) {
	loc, err := LoadZone(zone)
	if err != nil {
		return "", err
	}
	t := now.In(loc).Truncate(time.Second)
	return fmt.Sprintf("Time zone: %s\nRFC 3339: %s\nWeekday: %s\nHuman: %s",
		loc, t.Format(time.RFC3339), t.Weekday(), t.Format("Monday, 2 January 2006, 15:04:05 MST")+" ("+offset(t)+")"), nil
}

// Layouts accepted for a time without an offset, read in the source zone.
// Those without a date mean that time today there.
var (
	dateLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"}
	timeLayouts = []string{"15:04", "15:04:05", "3:04PM", "3:04 PM", "3PM", "3 PM"}
)

// Convert reads input as a time in zone from (a time in RFC 3339 carries
// its own offset, and from is then ignored) and describes it in zone to.
// now supplies the date for a time of day alone.
func Convert(now time.Time, input, from, to string) (string, error) {
	fromLoc, err := LoadZone(from)
	if err != nil {
		return "", err
	}
	toLoc, err := LoadZone(to)
	if err != nil {
		return "", err
	}
	t, fromName, err := parseTime(now, strings.TrimSpace(input), fromLoc)
	if err != nil {
		return "", err
	}
	u := t.In(toLoc)
	_, fromOff := t.Zone()
	_, toOff := u.Zone()
	source := fromName
	if label := zoneLabel(t); label != fromName {
		source += " (" + label + ")"
	}
	return fmt.Sprintf("%s in %s\nis %s in %s (%s)\nRFC 3339: %s\n%s",
		human(t), source,
		human(u), toLoc, zoneLabel(u),
		u.Format(time.RFC3339),
		difference(toLoc.String(), fromName, toOff-fromOff)), nil
}

func parseTime(now time.Time, input string, loc *time.Location) (time.Time, string, error) {
	if input == "" {
		return time.Time{}, "", errorf(`the time is empty: give one like "2026-03-14 15:30", "15:30" or "2026-03-14T15:30:00Z"`)
	}
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(input)); err == nil {
		return t, offset(t), nil
	}
	upper := strings.ToUpper(input)
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, upper, loc); err == nil {
			return t, loc.String(), nil
		}
	}
	for _, layout := range timeLayouts {
		if clock, err := time.Parse(layout, upper); err == nil {
			day := now.In(loc)
			t := time.Date(day.Year(), day.Month(), day.Day(), clock.Hour(), clock.Minute(), clock.Second(), 0, loc)
			return t, loc.String(), nil
		}
	}
	return time.Time{}, "", errorf(`cannot read the time %q: give one like "2026-03-14 15:30", "15:30" (today) or "2026-03-14T15:30:00Z" (RFC 3339)`, input)
}

func human(t time.Time) string {
	layout := "Monday 2006-01-02 15:04"
	if t.Second() != 0 {
		layout += ":05"
	}
	return t.Format(layout)
}

// offset writes a zone offset as UTC+05:30.
func offset(t time.Time) string {
	return "UTC" + t.Format("-07:00")
}

// zoneLabel names the zone's abbreviation and offset, without repeating
// the offset where the abbreviation is one (zones such as Asia/Dubai have
// only "+04").
func zoneLabel(t time.Time) string {
	abbr, _ := t.Zone()
	if abbr == "" || strings.HasPrefix(abbr, "+") || strings.HasPrefix(abbr, "-") || abbr == "UTC" {
		return offset(t)
	}
	return abbr + ", " + offset(t)
}

func difference(to, from string, seconds int) string {
	if seconds == 0 {
		return fmt.Sprintf("%s and %s have the same time.", to, from)
	}
	dir := "ahead of"
	if seconds < 0 {
		dir, seconds = "behind", -seconds
	}
	d := time.Duration(seconds) * time.Second
	h, m := int(d.Hours()), int(d.Minutes())%60
	var amount string
	switch {
	case m == 0 && h == 1:
		amount = "1 hour"
	case m == 0:
		amount = fmt.Sprintf("%d hours", h)
	case h == 0:
		amount = fmt.Sprintf("%d minutes", m)
	default:
		amount = fmt.Sprintf("%d h %d min", h, m)
	}
	return fmt.Sprintf("%s is %s %s %s.", to, amount, dir, from)
}
