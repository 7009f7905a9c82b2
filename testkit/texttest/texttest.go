// Package texttest runs the table tests of a function from text to text
// (a renderer, what users see of a reply): each case a subtest, its
// input in and its wanted output out, and what every output must be
// besides (that its reader accepts it) checked of each.
package texttest

import "testing"

// A Case is a row of such a table: the subtest's name, the input, and
// the output wanted of it. It stands for an unnamed struct type, so that
// a table's rows can be written without field names, as rows are (go vet
// wants the field names of a struct type another package names).
type Case = struct{ Name, In, Want string }

// Run runs f on each case's In, in a subtest named after the case, and
// wants its Want; name is f's in the messages. Each check is then given
// what f returned.
func Run(t *testing.T, name string, f func(string) string, cases []Case, checks ...func(t *testing.T, got string)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got := f(c.In)
			if got != c.Want {
				t.Errorf("%s(%q)\n got %q\nwant %q", name, c.In, got, c.Want)
			}
			for _, check := range checks {
				check(t, got)
			}
		})
	}
}
