package config

import (
	"errors"
	"strings"
)

// ErrMissing reports a required setting that has no value.
var ErrMissing = errors.New("missing setting")

// A MissingError names a required setting that is not set.
type MissingError struct {
	Name string
	Hint string
}

func (e *MissingError) Error() string {
	if e.Hint == "" {
		return e.Name + " is not set"
	}
	return e.Name + " is not set: " + e.Hint
}

// Unwrap lets callers test for ErrMissing.
func (e *MissingError) Unwrap() error { return ErrMissing }

// missing makes one error of the required settings that are not set, so
// that a first run names them all at once: the error itself where there
// is one, nil where there is none, else one line naming them all, then
// each with its hint.
func missing(errs []*MissingError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return missingSet(errs)
}

// A missingSet is two or more MissingErrors, said in one line.
type missingSet []*MissingError

func (m missingSet) Error() string {
	names := make([]string, len(m))
	hints := make([]string, len(m))
	for i, e := range m {
		names[i], hints[i] = e.Name, e.Name
		if e.Hint != "" {
			hints[i] += ": " + e.Hint
		}
	}
	list := strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	return list + " are not set. " + strings.Join(hints, "; ")
}

// Unwrap gives each MissingError, for errors.As and errors.Is.
func (m missingSet) Unwrap() []error {
	out := make([]error, len(m))
	for i, e := range m {
		out[i] = e
	}
	return out
}
