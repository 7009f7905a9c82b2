// States: how far the user got, and the moves that take it further.

package form

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A State is how far the user got: the field being asked (Step; the
// number of fields once all were asked) and the answers so far. Its JSON
// is what a store keeps between two presses.
type State struct {
	Step   int                        `json:"step"`
	Values map[string]json.RawMessage `json:"values,omitempty"`
}

// ErrWrongField is returned for a move the current field does not take
// (a press from an earlier card, a hostile one).
var ErrWrongField = errors.New("form: not a move of the current field")

// Current returns the field being asked; ok is false once all were asked.
func (f *Form) Current(st State) (Field, bool) {
	if st.Step < 0 || st.Step >= len(f.Fields) {
		return Field{}, false
	}
	return f.Fields[st.Step], true
}

// Value returns the answer to the field named name, if given.
func (f *Form) Value(st State, name string) (any, bool) {
	raw, ok := st.Values[name]
	if !ok {
		return nil, false
	}
	i := slices.IndexFunc(f.Fields, func(fd Field) bool { return fd.Name == name })
	if i < 0 {
		return nil, false
	}
	v, err := f.Fields[i].fromJSON(raw)
	if err != nil {
		return nil, false
	}
	return v, true
}

// set answers the current field with v and moves to the next.
func (f *Form) set(st *State, v any) error {
	fd, ok := f.Current(*st)
	if !ok {
		return ErrWrongField
	}
	if err := fd.Check(v); err != nil {
		return err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("form: %w", err)
	}
	if st.Values == nil {
		st.Values = map[string]json.RawMessage{}
	}
	st.Values[fd.Name] = raw
	st.Step++
	return nil
}

// Choose answers the current choice or yes/no field with its option i.
func (f *Form) Choose(st *State, i int) error {
	fd, ok := f.Current(*st)
	if !ok || (fd.Kind != Choice && fd.Kind != Boolean) || i < 0 || i >= len(fd.Options) {
		return ErrWrongField
	}
	if fd.Kind == Boolean {
		return f.set(st, fd.Options[i].Value == "true")
	}
	return f.set(st, fd.Options[i].Value)
}

// Toggle turns option i of the current Choices field on or off; the user
// stays on the field until Done.
func (f *Form) Toggle(st *State, i int) error {
	fd, ok := f.Current(*st)
	if !ok || fd.Kind != Choices || i < 0 || i >= len(fd.Options) {
		return ErrWrongField
	}
	var list []string
	if v, ok := f.Value(*st, fd.Name); ok {
		list = v.([]string)
	} else if d, ok := fd.Default.([]string); ok {
		list = slices.Clone(d)
	}
	val := fd.Options[i].Value
	if j := slices.Index(list, val); j >= 0 {
		list = slices.Delete(list, j, j+1)
	} else {
		list = append(list, val)
	}
	// Kept in the options' order, whatever the order of the presses.
	slices.SortFunc(list, func(a, b string) int { return fd.option(a) - fd.option(b) })
	raw, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("form: %w", err)
	}
	if st.Values == nil {
		st.Values = map[string]json.RawMessage{}
	}
	st.Values[fd.Name] = raw
	return nil
}

// Done ends the current Choices field: what is toggled on must be as many
// as the schema asks.
func (f *Form) Done(st *State) error {
	fd, ok := f.Current(*st)
	if !ok || fd.Kind != Choices {
		return ErrWrongField
	}
	v, answered := f.Value(*st, fd.Name)
	if !answered {
		st.Step++
		return nil
	}
	if err := fd.Check(v); err != nil {
		return err
	}
	st.Step++
	return nil
}

// Type answers the current field with what the user typed; an *Invalid
// says why it will not do, and the user stays on the field.
func (f *Form) Type(st *State, text string) error {
	fd, ok := f.Current(*st)
	if !ok {
		return ErrWrongField
	}
	v, err := fd.Read(text)
	if err != nil {
		return err
	}
	return f.set(st, v)
}

// TakeDefault answers the current field with its default.
func (f *Form) TakeDefault(st *State) error {
	fd, ok := f.Current(*st)
	if !ok || fd.Default == nil {
		return ErrWrongField
	}
	return f.set(st, fd.Default)
}

// Next moves on without answering; Back returns to the field before.
func (f *Form) Next(st *State) error {
	if st.Step >= len(f.Fields) {
		return ErrWrongField
	}
	st.Step++
	return nil
}

// Back returns to the field before the current one.
func (f *Form) Back(st *State) error {
	if st.Step <= 0 {
		return ErrWrongField
	}
	st.Step = min(st.Step, len(f.Fields)) - 1
	return nil
}

// A Missing is a submit without every required field: Fields names them,
// and Step is the first of them, to ask next.
type Missing struct {
	Fields []string
	Step   int
}

func (m *Missing) Error() string { return "form: still to fill in: " + strings.Join(m.Fields, ", ") }

// Submit is the content to send: every answer, and the default of each
// field left unanswered that has one. A required field with neither is a
// *Missing.
func (f *Form) Submit(st State) (map[string]any, error) {
	out := map[string]any{}
	var missing *Missing
	for i, fd := range f.Fields {
		if v, ok := f.Value(st, fd.Name); ok && fd.Check(v) == nil {
			out[fd.Name] = v
			continue
		}
		if fd.Default != nil {
			out[fd.Name] = fd.Default
			continue
		}
		if fd.Required {
			if missing == nil {
				missing = &Missing{Step: i}
			}
			missing.Fields = append(missing.Fields, fd.Label())
		}
	}
	if missing != nil {
		return nil, missing
	}
	return out, nil
}

// Defaults is what a form answered by nobody sends: each field's default.
// ok is false when a required field has none: the form is then declined.
func (f *Form) Defaults() (content map[string]any, ok bool) {
	content, err := f.Submit(State{})
	return content, err == nil
}
