package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type compiledSchema struct {
	schema *jsonschema.Schema
	err    error
}

// checkArguments decodes the arguments, repairing near misses (see
// repairArguments), and validates them against the tool's input schema.
// whole is false when the reply ended inside the arguments.
func (c *checker) checkArguments(version uint64, s mcpgram.ServerInfo, t mcpgram.Tool, raw string, whole bool, call Call) (Call, error) {
	call.Name, call.Server, call.Tool = toolcall.UseMCPTool, s.Name, t.Name
	args, repairs, err := toolcall.DecodeArguments(raw, t.InputSchema, whole)
	call.Repairs = repairs
	if err != nil {
		return call, problem(ProblemInvalidJSON, "The arguments for %q are not valid: %v. Write them as one JSON object. The tool's input schema: %s", t.Name, err, stableJSON(t.InputSchema))
	}
	call.Arguments = args
	canon, err := json.Marshal(args)
	if err != nil { // cannot happen for decoded JSON
		return call, fmt.Errorf("encode arguments: %w", err)
	}
	call.ArgumentsJSON = string(canon)

	schema := c.schema(version, s.Name, t)
	if schema == nil {
		return call, nil // a schema we cannot compile is the server's bug; let the server judge
	}
	if err := schema.Validate(map[string]any(args)); err != nil {
		var verr *jsonschema.ValidationError
		if !errors.As(err, &verr) {
			return call, nil
		}
		var lines []string
		for _, leaf := range leaves(verr) {
			where := "/" + strings.Join(leaf.InstanceLocation, "/")
			lines = append(lines, fmt.Sprintf("- at %s: %s", where, leaf.ErrorKind.LocalizedString(printer)))
		}
		sort.Strings(lines)
		lines = dedup(lines)
		return call, problem(ProblemSchema, "The arguments for %q do not match its input schema:\n%s\nThe tool's input schema: %s", t.Name, strings.Join(lines, "\n"), stableJSON(t.InputSchema))
	}
	return call, nil
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// schema returns the compiled input schema of a tool, or nil when it does
// not compile. The cache is dropped whenever the catalog version changes.
func (c *checker) schema(version uint64, server string, t mcpgram.Tool) *jsonschema.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.schemas == nil || c.version != version {
		c.schemas = map[string]compiledSchema{}
		c.version = version
	}
	key := server + "\x00" + t.Name
	if cs, ok := c.schemas[key]; ok {
		return cs.schema
	}
	cs := compileSchema(t.InputSchema)
	c.schemas[key] = cs
	return cs.schema
}

func compileSchema(raw json.RawMessage) compiledSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return compiledSchema{err: err}
	}
	comp := jsonschema.NewCompiler()
	// A server's schema must not make us read files or fetch URLs.
	comp.UseLoader(refuseLoader{})
	const loc = "mcpgram:input-schema.json"
	if err := comp.AddResource(loc, doc); err != nil {
		return compiledSchema{err: err}
	}
	s, err := comp.Compile(loc)
	return compiledSchema{schema: s, err: err}
}

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %q not loaded: external references are not allowed", url)
}
