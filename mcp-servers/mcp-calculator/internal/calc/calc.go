// Package calc evaluates arithmetic expressions safely, and serves that as
// the "calculate" MCP tool.
//
// Parsing is expr-lang/expr's; evaluation is our own walk over a whitelist
// of its syntax tree: numbers, + - * / % ^ **, parentheses, the constants
// pi and e, and a fixed set of math functions. Nothing else (variables,
// strings, member access, builtins such as map or filter) is accepted, so no
// expression can reach code or data, and without loops every evaluation is
// bounded by the expression's length. All arithmetic is float64: "/" is true
// division, and integers cannot overflow silently.
package calc

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// MaxLen is the longest expression accepted, in bytes.
const MaxLen = 1000

// maxNodes bounds the syntax tree, and with it the work of one evaluation.
const maxNodes = 500

// An Error explains why an expression has no value, in words for the user.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func errorf(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Eval returns the value of an arithmetic expression.
func Eval(expression string) (float64, error) {
	expression = normalize(expression)
	if strings.TrimSpace(expression) == "" {
		return 0, errorf("the expression is empty")
	}
	if len(expression) > MaxLen {
		return 0, errorf("the expression is %d characters long; the limit is %d", len(expression), MaxLen)
	}
	if err := scan(expression); err != nil {
		return 0, err
	}
	tree, err := parser.Parse(expression)
	if err != nil {
		var fe *file.Error
		if errors.As(err, &fe) {
			return 0, errorf("%s at position %d", fe.Message, fe.Column+1)
		}
		return 0, errorf("%v", err)
	}
	e := evaluator{src: expression}
	v, err := e.eval(tree.Node)
	if err != nil {
		return 0, err
	}
	if v == 0 {
		v = 0 // no "-0"
	}
	return v, nil
}

// normalize accepts the symbols people paste from elsewhere.
var normalize = strings.NewReplacer(
	"×", "*", "·", "*", "÷", "/", "−", "-", "π", "pi", "√", "sqrt",
).Replace

// An evaluator walks one expression's tree; src is the expression, whose
// positions its errors name.
type evaluator struct {
	src   string
	nodes int
}

// at is the position (1-based, in characters) of node n in the expression:
// an operator's, or a function's name.
func (e *evaluator) at(n ast.Node) int {
	from := min(max(n.Location().From, 0), len(e.src))
	return utf8.RuneCountInString(e.src[:from]) + 1
}

// what names node n for an error: its operator or its function.
func what(n ast.Node) string {
	switch n := n.(type) {
	case *ast.BinaryNode:
		return n.Operator
	case *ast.UnaryNode:
		return n.Operator
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			return id.Value
		}
	case *ast.BuiltinNode:
		return n.Name
	}
	return "the expression"
}

func (e *evaluator) eval(node ast.Node) (float64, error) {
	e.nodes++
	if e.nodes > maxNodes {
		return 0, errorf("the expression is too complex (more than %d parts)", maxNodes)
	}
	var (
		v   float64
		err error
	)
	switch n := node.(type) {
	case *ast.IntegerNode:
		v = float64(n.Value)
	case *ast.FloatNode:
		v = n.Value
	case *ast.IdentifierNode:
		c, ok := constants[strings.ToLower(n.Value)]
		if !ok {
			return 0, errorf("unknown name %q at position %d: %s", n.Value, e.at(n), allowed())
		}
		v = c
	case *ast.UnaryNode:
		v, err = e.unary(n)
	case *ast.BinaryNode:
		v, err = e.binary(n)
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok {
			return 0, errorf("at position %d, %s", e.at(n), allowed())
		}
		v, err = e.call(n, id.Value, n.Arguments)
	case *ast.BuiltinNode: // abs, max, min, round, ... are expr builtins
		v, err = e.call(n, n.Name, n.Arguments)
	default:
		return 0, errorf("at position %d, %s", e.at(node), allowed())
	}
	if err != nil {
		return 0, err
	}
	switch {
	case math.IsInf(v, 0):
		return 0, errorf("the result of %s at position %d is too large", what(node), e.at(node))
	case math.IsNaN(v):
		return 0, errorf("the result of %s at position %d is not a real number", what(node), e.at(node))
	}
	return v, nil
}

func (e *evaluator) unary(n *ast.UnaryNode) (float64, error) {
	x, err := e.eval(n.Node)
	if err != nil {
		return 0, err
	}
	switch n.Operator {
	case "-":
		return -x, nil
	case "+":
		return x, nil
	}
	return 0, errorf("operator %q at position %d is not allowed: %s", n.Operator, e.at(n), allowed())
}

func (e *evaluator) binary(n *ast.BinaryNode) (float64, error) {
	switch n.Operator {
	case "+", "-", "*", "/", "%", "^", "**":
	default:
		return 0, errorf("operator %q at position %d is not allowed: %s", n.Operator, e.at(n), allowed())
	}
	x, err := e.eval(n.Left)
	if err != nil {
		return 0, err
	}
	y, err := e.eval(n.Right)
	if err != nil {
		return 0, err
	}
	switch n.Operator {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return 0, errorf("division by zero at position %d", e.at(n))
		}
		return x / y, nil
	case "%":
		if y == 0 {
			return 0, errorf("division by zero (in %%) at position %d", e.at(n))
		}
		return math.Mod(x, y), nil
	default: // "^", "**"
		return math.Pow(x, y), nil
	}
}

// call evaluates the call n of the function name with argNodes.
func (e *evaluator) call(n ast.Node, name string, argNodes []ast.Node) (float64, error) {
	f, ok := functions[strings.ToLower(name)]
	if !ok {
		return 0, errorf("unknown function %q at position %d: %s", name, e.at(n), allowed())
	}
	if len(argNodes) < f.min || (f.max >= 0 && len(argNodes) > f.max) {
		return 0, errorf("%s at position %d takes %s", name, e.at(n), f.arity())
	}
	args := make([]float64, len(argNodes))
	for i, a := range argNodes {
		v, err := e.eval(a)
		if err != nil {
			return 0, err
		}
		args[i] = v
	}
	v, err := f.fn(args)
	if err != nil {
		return 0, errorf("%s at position %d: %v", name, e.at(n), err)
	}
	return v, nil
}

var constants = map[string]float64{
	"pi": math.Pi,
	"e":  math.E,
}

type function struct {
	min, max int // max -1: any number
	fn       func(args []float64) (float64, error)
}

func (f function) arity() string {
	switch {
	case f.max < 0:
		return fmt.Sprintf("at least %d arguments", f.min)
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

func one(fn func(float64) float64) function {
	return function{1, 1, func(a []float64) (float64, error) { return fn(a[0]), nil }}
}

func two(fn func(float64, float64) float64) function {
	return function{2, 2, func(a []float64) (float64, error) { return fn(a[0], a[1]), nil }}
}

var functions = map[string]function{
	"abs":   one(math.Abs),
	"sqrt":  one(math.Sqrt),
	"cbrt":  one(math.Cbrt),
	"floor": one(math.Floor),
	"ceil":  one(math.Ceil),
	"trunc": one(math.Trunc),
	"exp":   one(math.Exp),
	"ln":    one(math.Log),
	"log10": one(math.Log10),
	"log2":  one(math.Log2),
	"sin":   one(math.Sin),
	"cos":   one(math.Cos),
	"tan":   one(math.Tan),
	"asin":  one(math.Asin),
	"acos":  one(math.Acos),
	"atan":  one(math.Atan),
	"atan2": two(math.Atan2),
	"hypot": two(math.Hypot),
	"pow":   two(math.Pow),
	"log": {1, 2, func(a []float64) (float64, error) { // log(x) is natural; log(x, base)
		if len(a) == 2 {
			return math.Log(a[0]) / math.Log(a[1]), nil
		}
		return math.Log(a[0]), nil
	}},
	"round": {1, 2, func(a []float64) (float64, error) { // round(x) or round(x, digits)
		if len(a) == 1 {
			return math.Round(a[0]), nil
		}
		d := a[1]
		if d != math.Trunc(d) || d < -15 || d > 15 {
			return 0, errors.New("its digits must be a whole number from -15 to 15")
		}
		p := math.Pow(10, d)
		return math.Round(a[0]*p) / p, nil
	}},
	"min": {1, -1, func(a []float64) (float64, error) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Min(m, x)
		}
		return m, nil
	}},
	"max": {1, -1, func(a []float64) (float64, error) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Max(m, x)
		}
		return m, nil
	}},
}

// allowed says what an expression may contain.
func allowed() string {
	names := slices.Sorted(maps.Keys(functions))
	return "only numbers, the operators + - * / % ^ and parentheses, the constants pi and e, and the functions " +
		strings.Join(names, ", ") + " are allowed"
}

// Format writes v the way a person would: integers without a decimal
// point, and no binary noise (0.1+0.2 is 0.3), rounding to 15 significant
// digits; very large and very small numbers in exponent form.
func Format(v float64) string {
	if v == 0 {
		return "0"
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		r = v
	}
	if a := math.Abs(r); a >= 1e21 || a < 1e-9 {
		return strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
