// Package tables is what the two engines, store/sqlite and
// store/postgres, share of their tables: how the domain's values are laid
// in columns (a message's images, a chat's servers, a turn's record), the
// statements of /stats, which read the same on either, and the reader of
// the numbered migrations. Both engines store times as UTC Unix
// milliseconds.
package tables

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Millis converts t to what the database stores.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis converts a stored time back to a UTC time.Time.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// EncodeNames stores a set of names as a sorted JSON array, without
// duplicates: how a chat's servers are kept.
func EncodeNames(names []string) string {
	set := slices.Compact(slices.Sorted(slices.Values(names)))
	if set == nil {
		set = []string{}
	}
	b, _ := json.Marshal(set) // strings always marshal
	return string(b)
}

// DecodeNames reads what EncodeNames wrote.
func DecodeNames(raw string) ([]string, error) {
	var names []string
	if err := json.Unmarshal([]byte(raw), &names); err != nil {
		return nil, fmt.Errorf("decode server names: %w", err)
	}
	return names, nil
}

// JoinMedia is how a message's image references (store.Message.Media)
// are stored: separated by spaces, which no reference holds.
func JoinMedia(refs []string) string { return strings.Join(refs, " ") }

// SplitMedia is the inverse of JoinMedia; "" is nil.
func SplitMedia(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// AddRecentTool adds r, read from an audit row of status status, to the
// recent tools out, newest first: once, and only a tool that ran (ok or
// error), not a resource read.
func AddRecentTool(out []store.ToolRef, r store.ToolRef, status string) []store.ToolRef {
	if status != auditOK && status != auditError || r.Tool == resourceRead || slices.Contains(out, r) {
		return out
	}
	return append(out, r)
}

// resourceRead is the tool name of a resource read's audit row.
const resourceRead = "access_mcp_resource"
