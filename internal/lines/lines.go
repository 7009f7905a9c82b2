// Package lines answers two questions about text a person wrote or will
// read: what its first line says, and where a byte offset falls in it as a
// line and column, the way an editor counts them.
package lines

import "strings"

// First returns the first line of s without the space around it: the
// summary of a description, or of a reply, that fits on one line.
func First(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

// Position returns the line and column, both counted from 1, of the byte at
// offset off (counted from 0) of s. The column counts bytes. An offset past
// the end is the place just after the last byte, which is where a parser
// that ran out of input stands.
func Position[T ~string | ~[]byte](s T, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(s)))
	line, col = 1, 1
	for i := range off {
		if s[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// Fence returns a Markdown code fence that body cannot close: three
// backticks, or one more than the longest run of backticks in body.
func Fence(body string) string {
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
