// The dialects: calls to an MCP server's tool written the way other
// model families and hosts write them, read into the Block of a
// use_mcp_tool call (or of a core tool, when that is the name they give).
// Each is read strictly: a body that is not plainly one call in its
// dialect is not taken for one.

package toolcall

import (
	"encoding/json"
	"html"
	"io"
	"slices"
	"strings"
)

// The kinds of repair the parser records on a Block (Block.Repairs).
const (
	RepairEscaped   = "html_escaped"      // the call's tags were HTML-escaped (&lt;use_mcp_tool&gt;)
	RepairReasoning = "reasoning"         // the call stood in the reply's thinking, its text holding none
	RepairToolCall  = "dialect_tool_call" // <tool_call>{"name": …, "arguments": …}</tool_call>
	RepairFunction  = "dialect_function"  // <tool_call><function=…><parameter=…>…</tool_call>
	RepairJSONCall  = "dialect_json"      // the reply's whole content {"tool": …, "params": …}
)

// readDialect reads the body of a block opened by the kindDialect tag.
func readDialect(tag, body string, complete bool) Block {
	if tag == DialectMCPTool {
		b := parseMCPTool(body)
		b.Complete = complete
		return b
	}
	b, ok := readToolCall(body)
	switch {
	case ok:
	case !complete && startsCall(body):
		// Cut off: what was meant cannot be read, but it was a call.
		b = Block{Name: UseMCPTool, Dialect: DialectToolCall, Params: map[string]string{}}
	default:
		b = Block{Name: ForeignToolCall, Params: map[string]string{}}
	}
	b.Complete = complete
	return b
}

// startsCall reports whether a <tool_call> body starts as one of its
// dialects does.
func startsCall(body string) bool {
	t := strings.TrimSpace(body)
	return strings.HasPrefix(t, "{") || strings.HasPrefix(t, functionOpen)
}

// readToolCall reads a <tool_call> body: one JSON object naming the tool
// and its arguments (DialectToolCall), or one <function=…> element
// (DialectFunction).
func readToolCall(body string) (Block, bool) {
	t := strings.TrimSpace(Unfence(body))
	if strings.HasPrefix(t, functionOpen) {
		name, inner, pairs, ok := readFunction(t)
		if !ok {
			return Block{}, false
		}
		b, ok := functionBlock(name, inner, pairs)
		b.Repairs = []string{RepairFunction}
		return b, ok
	}
	name, args, kinds, ok := readCallJSON(t)
	if !ok {
		return Block{}, false
	}
	b, ok := callBlock(name, args, DialectToolCall)
	b.Repairs = append([]string{RepairToolCall}, kinds...)
	return b, ok
}

// readJSONReply reads a reply whose whole visible content, in a code
// fence or not, is one JSON call (DialectJSON). Its quotes may be
// HTML-escaped (&quot;), as some endpoints send them.
func readJSONReply(text string) (Block, bool) {
	t := strings.TrimSpace(text)
	inner := strings.TrimSpace(Unfence(t))
	fenced := inner != t
	var repairs []string
	if !strings.Contains(inner, `"`) && strings.Contains(inner, "&quot;") {
		inner = html.UnescapeString(inner)
		repairs = append(repairs, RepairEscaped)
	}
	if !strings.HasPrefix(inner, "{") || !strings.HasSuffix(inner, "}") {
		return Block{}, false
	}
	name, args, kinds, ok := readCallJSON(inner)
	var b Block
	if ok {
		b, ok = callBlock(name, args, DialectJSON)
		b.Repairs = append(append(repairs, RepairJSONCall), kinds...)
	}
	if !ok {
		if !callLike(inner) {
			return Block{}, false
		}
		// A call, but not plainly which: the check refuses it.
		b = Block{Name: ForeignJSON, Params: map[string]string{}}
	}
	b.Complete, b.Fenced, b.Raw = true, fenced, t
	return b, true
}

// callLike reports whether text is a JSON object that names a tool (under
// "tool" or "name") and gives it arguments (under "params", "arguments"
// or "parameters"), whatever else it holds, a key twice among it: a call
// in intent, though readCallJSON cannot read it.
func callLike(text string) bool {
	var obj map[string]json.RawMessage // the last of a key given twice
	if json.Unmarshal([]byte(text), &obj) != nil {
		fixed, _, repaired := repairJSON(text, false)
		if !repaired || json.Unmarshal([]byte(fixed), &obj) != nil {
			return false
		}
	}
	var name string
	named := json.Unmarshal(obj["tool"], &name) == nil || json.Unmarshal(obj["name"], &name) == nil
	_, a := obj["arguments"]
	_, p := obj["parameters"]
	_, q := obj["params"]
	return named && name != "" && (a || p || q)
}

// readCallJSON reads {"name": TOOL, "arguments": {…}}: the tool under
// "name" or "tool", its arguments (an object, a string holding one, or
// none) under "arguments", "parameters" or "params", and no other key.
// JSON slips that repairJSON fixes are read past and returned as kinds.
func readCallJSON(text string) (name, args string, kinds []string, ok bool) {
	if checkBounds(text) != nil {
		return "", "", nil, false
	}
	obj, ok := jsonObject(text)
	if !ok {
		fixed, k, repaired := repairJSON(text, false)
		if !repaired {
			return "", "", nil, false
		}
		if obj, ok = jsonObject(fixed); !ok {
			return "", "", nil, false
		}
		kinds = k
	}
	var nameKey, argsKey string
	for k := range obj {
		switch {
		case k == "name" || k == "tool":
			if nameKey != "" {
				return "", "", nil, false
			}
			nameKey = k
		case k == "arguments" || k == "parameters" || k == "params":
			if argsKey != "" {
				return "", "", nil, false
			}
			argsKey = k
		default:
			return "", "", nil, false
		}
	}
	if nameKey == "" || json.Unmarshal(obj[nameKey], &name) != nil || strings.TrimSpace(name) == "" {
		return "", "", nil, false
	}
	if argsKey != "" {
		raw := obj[argsKey]
		switch raw[0] {
		case '{':
			args = string(raw)
		case '"':
			_ = json.Unmarshal(raw, &args) // a string token decodes
		case 'n': // null
		default:
			return "", "", nil, false
		}
	}
	return strings.TrimSpace(name), strings.TrimSpace(args), kinds, true
}

// jsonObject reads text as one JSON object, keeping each member's value
// as written; a key given twice refuses it, since which was meant cannot
// be told.
func jsonObject(text string) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if _, dup := out[key]; dup {
			return nil, false
		}
		out[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
}

// callBlock is the Block of a call to name with args as JSON text: a
// core tool's block, its parameters the arguments' members, when name is
// a core tool's; else a use_mcp_tool call in dialect.
func callBlock(name, args, dialect string) (Block, bool) {
	params, core := toolParams[name]
	if !core {
		return Block{Name: UseMCPTool, Dialect: dialect, Params: map[string]string{"tool_name": name, "arguments": args}}, true
	}
	b := Block{Name: name, Params: map[string]string{}}
	if args == "" {
		return b, true
	}
	obj, ok := jsonObject(args)
	if !ok {
		return Block{}, false
	}
	for k, v := range obj {
		if !slices.ContainsFunc(params, func(p paramTag) bool { return p.name == k }) {
			return Block{}, false // not a parameter of the core tool
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v) // an object or array, as the arguments or options are
		}
		b.Params[k] = strings.TrimSpace(s)
	}
	return b, true
}

// The function form's tags.
const (
	functionOpen   = "<function="
	functionClose  = "</function>"
	parameterOpen  = "<parameter="
	parameterClose = "</parameter>"
)

// readFunction reads <function=NAME> followed by <parameter=KEY>VALUE
// </parameter> elements and </function>, with nothing else but space
// around them. It returns the name, the parameter elements as written,
// and each key with its value (see paramValue). A key given twice
// refuses it.
func readFunction(t string) (name, inner string, pairs [][2]string, ok bool) {
	rest := strings.TrimPrefix(t, functionOpen)
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", "", nil, false
	}
	name = strings.TrimSpace(rest[:end])
	if name == "" || strings.ContainsAny(name, "<\n") {
		return "", "", nil, false
	}
	rest = rest[end+1:]
	stop := strings.LastIndex(rest, functionClose)
	if stop < 0 || strings.TrimSpace(rest[stop+len(functionClose):]) != "" {
		return "", "", nil, false
	}
	inner = strings.TrimSpace(rest[:stop])
	pairs, ok = parameterPairs(inner)
	return name, inner, pairs, ok
}

// parameterPairs reads <parameter=KEY>VALUE</parameter> elements
// separated by space, as the function form writes arguments.
func parameterPairs(s string) ([][2]string, bool) {
	var out [][2]string
	for rest := strings.TrimSpace(s); rest != ""; rest = strings.TrimSpace(rest) {
		after, found := strings.CutPrefix(rest, parameterOpen)
		if !found {
			return nil, false
		}
		end := strings.IndexByte(after, '>')
		if end < 0 {
			return nil, false
		}
		key := strings.TrimSpace(after[:end])
		if !isKey(key) || slices.ContainsFunc(out, func(p [2]string) bool { return p[0] == key }) {
			return nil, false
		}
		after = after[end+1:]
		stop := strings.Index(after, parameterClose)
		if stop < 0 {
			return nil, false
		}
		out = append(out, [2]string{key, paramValue(after[:stop])})
		rest = after[stop+len(parameterClose):]
	}
	return out, true
}

// paramValue is a parameter's text without the one line break the form
// puts after its opening tag and before its closing one: the rest of its
// space may be the value's (the indentation of code, say).
func paramValue(v string) string {
	for _, nl := range []string{"\r\n", "\n"} {
		if s, ok := strings.CutPrefix(v, nl); ok {
			v = s
			break
		}
	}
	for _, nl := range []string{"\r\n", "\n"} {
		if s, ok := strings.CutSuffix(v, nl); ok {
			return s
		}
	}
	return v
}

// functionBlock is the Block of a call in the function form: a core
// tool's, its parameters the elements', or a use_mcp_tool call whose
// arguments are the elements, typed by the tool's schema when checked.
func functionBlock(name, inner string, pairs [][2]string) (Block, bool) {
	params, core := toolParams[name]
	if !core {
		return Block{Name: UseMCPTool, Dialect: DialectFunction, Params: map[string]string{"tool_name": name, "arguments": inner}}, true
	}
	b := Block{Name: name, Params: map[string]string{}}
	for _, kv := range pairs {
		if !slices.ContainsFunc(params, func(p paramTag) bool { return p.name == kv[0] }) {
			return Block{}, false
		}
		b.Params[kv[0]] = strings.TrimSpace(kv[1])
	}
	return b, true
}

// parseMCPTool reads the body of an <mcp:tool> block:
//
//	name: TOOL
//	parameters: {JSON}
//
// The JSON may span lines. In the lenient form the parameters are
// "key: value" lines instead (after "parameters:", or directly after the
// name line); a value that is valid JSON (number, true, an array …) keeps
// its JSON type, anything else is a string.
func parseMCPTool(body string) Block {
	b := Block{Name: UseMCPTool, Params: map[string]string{}, Dialect: DialectMCPTool}
	lines := strings.Split(body, "\n")
	var loose []string
	for i := 0; i < len(lines); i++ {
		key, value, ok := splitKV(lines[i])
		if !ok {
			continue
		}
		switch strings.ToLower(key) {
		case "name", "tool", "tool_name":
			if _, seen := b.Params["tool_name"]; !seen {
				b.Params["tool_name"] = value
				continue
			}
		case "parameters", "arguments":
			rest := strings.TrimSpace(value + "\n" + strings.Join(lines[i+1:], "\n"))
			if rest == "" || strings.HasPrefix(rest, "{") {
				b.Params["arguments"] = rest
			} else {
				b.Params["arguments"] = looseArguments(lines[i+1:], value)
			}
			return b
		}
		loose = append(loose, lines[i])
	}
	if len(loose) > 0 {
		b.Params["arguments"] = looseArguments(loose, "")
	}
	return b
}

// looseArguments turns "key: value" lines into a JSON object.
func looseArguments(lines []string, first string) string {
	args := map[string]any{}
	if k, v, ok := splitKV(first); ok {
		args[k] = looseValue(v)
	}
	for _, line := range lines {
		if k, v, ok := splitKV(line); ok {
			args[k] = looseValue(v)
		}
	}
	out, err := json.Marshal(args) // encoding/json sorts map keys
	if err != nil {
		return "{}"
	}
	return string(out)
}

func looseValue(v string) any {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err == nil {
		return x
	}
	return v
}

func splitKV(line string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(strings.TrimSpace(line), ":")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.ContainsAny(key, " \t\"{}[]") {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}
