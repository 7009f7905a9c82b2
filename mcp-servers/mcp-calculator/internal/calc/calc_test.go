package calc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/mcp-servers/mcp-calculator/internal/calc"
)

func TestEval(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{"25 * 48 + 120 / 4", "1230"},
		{"7 / 2", "3.5"},
		{"1 / 3", "0.333333333333333"},
		{"0.1 + 0.2", "0.3"},
		{"2 ^ 10", "1024"},
		{"2 ** 3 ** 2", "512"}, // right-associative
		{"-2 ^ 2", "-4"},       // as in mathematics: the power first
		{"-(2 ^ 2)", "-4"},
		{"(3 + 4) * 2", "14"},
		{"17 % 5", "2"},
		{"5.5 % 2", "1.5"},
		{"+3 - -3", "6"},
		{"sqrt(2) * sqrt(2)", "2"},
		{"abs(-7.25)", "7.25"},
		{"round(2.5)", "3"},
		{"round(pi, 2)", "3.14"},
		{"ROUND(1234.5678, -2)", "1200"},
		{"min(4, 2, 8)", "2"},
		{"max(4, 2, 8)", "8"},
		{"pow(3, 4)", "81"},
		{"floor(-1.5) + ceil(1.2)", "0"},
		{"log(e)", "1"},
		{"log(8, 2)", "3"},
		{"log10(1000)", "3"},
		{"cos(pi)", "-1"},
		{"2 × 3 ÷ 4 − 1", "0.5"},
		{"2π", ""}, // not valid syntax: checked below as an error
		{"1e3 + 1", "1001"},
		{"9007199254740993 * 10", "90071992547409900"}, // 15 significant digits
		{"10 ^ 20", "100000000000000000000"},
		{"10 ^ 25", "1e+25"},
		{"1 / 10 ^ 12", "1e-12"},
		{"0 * -1", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			v, err := calc.Eval(tt.expr)
			if tt.want == "" {
				if err == nil {
					t.Errorf("Eval(%q) = %v, want an error", tt.expr, v)
				}
				return
			}
			if err != nil {
				t.Fatalf("Eval(%q): %v", tt.expr, err)
			}
			if got := calc.Format(v); got != tt.want {
				t.Errorf("Eval(%q) = %s, want %s", tt.expr, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		expr string
		want string // part of the error
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"1 / 0", "division by zero at position 3"},
		{"5 % 0", "division by zero (in %) at position 3"},
		{"1 / (2 - 2)", "division by zero at position 3"},
		{"2 +", "position"},
		{"(1 + 2", "position"},
		{"1 +* 2", "position"},
		{"10 ^ 400", "the result of ^ at position 4 is too large"},
		{"10 ^ 10 ^ 10", "the result of ^ at position 4 is too large"},
		{"1 + exp(1000)", "the result of exp at position 5 is too large"},
		{"2 × 1e308 × 10", "the result of * at position 3 is too large"},
		{"sqrt(-1)", "the result of sqrt at position 1 is not a real number"},
		{"x + 1", `unknown name "x" at position 1`},
		{"env", `unknown name "env"`},
		{"foo(1)", `unknown function "foo" at position 1`},
		{"len([1, 2])", `unknown function "len"`},
		{"sqrt()", "sqrt at position 1 takes 1 argument"},
		{"pow(2)", "pow at position 1 takes 2 arguments"},
		{"round(1.5, 0.5)", "round at position 1: its digits must be a whole number"},
		{`"a" + "b"`, "only numbers"},
		{"1 == 1", `operator "==" at position 3`},
		{"true", "only numbers"},
		{"[1, 2]", "only numbers"},
		{"1 > 0 ? 1 : 2", "only numbers"},
		{"let x = 1; x", "only numbers"},
		{"filter([1], # > 0)", "filter"},
		{"now()", `unknown function "now"`},
		{"1..3", `operator ".."`},
		{"a.b", "only numbers"},
		{"not 1", `operator "not" at position 1`},
		{"7 // 2 + 100", `"//" at position 3 is not an operator`},
		{"10 /* 2 */ + 1", `"/*" at position 4 would start a comment`},
		{"1 + 2 // comment", `"//"`},
		{"99999999999999999999 + 1", "at position 1, the number 99999999999999999999 is too large for a whole number"},
		{"-9223372036854775808", "too large for a whole number"},
		{"9_223_372_036_854_775_808", "too large for a whole number"},
		{"0xFFFFFFFFFFFFFFFFFF", "too large for a whole number"},
		{"1e400 - 1", "the number 1e400 is too large"},
		{"1e+400", "the number 1e+400 is too large"},
		{"١٢ + 1", "'١' at position 1 is not allowed"},
		{"1 + \xff", "not valid UTF-8 at position 5"},
		{strings.Repeat("1+", 600) + "1", "limit"},
		{strings.Repeat("1+", 499) + "1", "too complex"},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), ""},
	}
	for _, tt := range tests {
		name := tt.expr
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			v, err := calc.Eval(tt.expr)
			if err == nil {
				if tt.want == "" {
					return // deep nesting may be fine; it must only not crash
				}
				t.Fatalf("Eval(%q) = %v, want error containing %q", tt.expr, v, tt.want)
			}
			var ce *calc.Error
			if !errors.As(err, &ce) {
				t.Errorf("Eval(%q) error %T, want *calc.Error", tt.expr, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Eval(%q) error %q, want it to contain %q", tt.expr, err, tt.want)
			}
			// mcp-servers/README.md: each error names the position, but
			// for those of the whole expression.
			if !wholeExpression[tt.want] && !strings.Contains(err.Error(), "position ") {
				t.Errorf("Eval(%q) error %q names no position", tt.expr, err)
			}
		})
	}
}

// wholeExpression are the errors of an expression as a whole, which have
// no one position.
var wholeExpression = map[string]bool{"empty": true, "limit": true, "too complex": true}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"25 * 48 + 120 / 4", "sqrt(2)^2", "max(1,2,3) % 2", "-(1e308*10)", "round(1.005, 2)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := calc.Eval(s)
		if err != nil {
			var ce *calc.Error
			if !errors.As(err, &ce) {
				t.Errorf("Eval(%q): error %T %v is not a *calc.Error", s, err, err)
			}
			return
		}
		if got := calc.Format(v); got == "" || got == "NaN" || strings.Contains(got, "Inf") {
			t.Errorf("Eval(%q) formats as %q", s, got)
		}
	})
}
