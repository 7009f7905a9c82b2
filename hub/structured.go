// Structured results: a tool that declares an outputSchema promises
// structuredContent that follows it, and the hub holds it to that.

package hub

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrBadResult is the error of a call whose result breaks the tool's own
// output schema: no structured content, or content that does not match.
var ErrBadResult = errors.New("the tool's result does not match its output schema")

// maxSchemaProblems bounds what an ErrBadResult lists.
const maxSchemaProblems = 5

// outputSchemas are a server's compiled output schemas, by tool, for the
// catalog they were compiled from: the hub drops them when it reads the
// catalog again.
type outputSchemas struct {
	mu sync.Mutex
	m  map[string]*compiledOutput
}

type compiledOutput struct {
	schema *jsonschema.Schema
	err    error
}

func (o *outputSchemas) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m = nil
}

// get compiles raw, the output schema of tool, once.
func (o *outputSchemas) get(tool string, raw []byte) *compiledOutput {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.m[tool]; ok {
		return c
	}
	if o.m == nil {
		o.m = map[string]*compiledOutput{}
	}
	c := &compiledOutput{}
	c.schema, c.err = compileOutput(raw)
	o.m[tool] = c
	return c
}

func compileOutput(raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	// A server's schema must not make the hub read files or fetch URLs.
	comp.UseLoader(refuseLoader{})
	const loc = "mcpgram:output-schema.json"
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return comp.Compile(loc)
}

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %q not loaded: external references are not allowed", url)
}

// checkOutput holds res, a result of tool, to the tool's output schema.
// A tool's own error needs not follow it; a schema that does not compile
// is the server's bug, logged, and the result passes.
func (s *server) checkOutput(tool string, res *mcpgram.Result) error {
	if res.IsError {
		return nil
	}
	s.mu.Lock()
	var raw []byte
	for _, t := range s.cat.tools {
		if t.Name == tool {
			raw = t.OutputSchema
		}
	}
	s.mu.Unlock()
	if raw == nil {
		return nil
	}
	c := s.outputs.get(tool, raw)
	if c.err != nil {
		s.log.Warn("the tool's output schema does not compile; its results are not checked", "tool", tool, "err", c.err)
		return nil
	}
	if res.Structured == nil {
		return fmt.Errorf("%w: it returned no structured content", ErrBadResult)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.Structured))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadResult, err)
	}
	err = c.schema.Validate(v)
	var verr *jsonschema.ValidationError
	if err == nil || !errors.As(err, &verr) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBadResult, strings.Join(problems(verr), "; "))
}

var printer = message.NewPrinter(language.English)

// problems are the leaves of e, one line each, sorted, at most
// maxSchemaProblems.
func problems(e *jsonschema.ValidationError) []string {
	var lines []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			lines = append(lines, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer)))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	sort.Strings(lines)
	if len(lines) > maxSchemaProblems {
		lines = append(lines[:maxSchemaProblems], fmt.Sprintf("and %d more", len(lines)-maxSchemaProblems))
	}
	return lines
}
