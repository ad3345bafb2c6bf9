package callargs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// MaxJSONBytes bounds the arguments of a call given as one JSON object:
// 16 MiB, the size of the largest result a server may send
// (mcpclient.DefaultMaxResultBytes).
const MaxJSONBytes = 16 << 20

// MistakeError is arguments that are not a call's: the command line's
// mistake, said with what to write instead.
type MistakeError struct{ msg string }

func (e *MistakeError) Error() string { return e.msg }

func mistakef(format string, args ...any) error { return &MistakeError{fmt.Sprintf(format, args...)} }

// ReadObject reads a call's ARGS_JSON: arg itself, or stdin for "-" (at
// most MaxJSONBytes+1 bytes of it, so an endless stream is refused
// without being read whole). Anything but a JSON object is a
// *MistakeError: MCP tool arguments are an object, and silently calling
// with {} instead would run the tool with arguments nobody gave.
func ReadObject(arg string, stdin io.Reader) (json.RawMessage, error) {
	raw := []byte(arg)
	if arg == "-" {
		var err error
		if raw, err = io.ReadAll(io.LimitReader(stdin, MaxJSONBytes+1)); err != nil {
			return nil, fmt.Errorf("reading arguments from stdin: %w", err)
		}
	}
	if len(raw) > MaxJSONBytes {
		return nil, mistakef("the arguments are larger than %d MiB", MaxJSONBytes>>20)
	}
	raw = bytes.TrimSpace(raw)
	if k, _, ok := strings.Cut(string(raw), "="); ok && arg != "-" && isKey(k) {
		return nil, mistakef(`arguments %q are KEY=VALUE, not JSON: write --arg %s (one --arg per argument), or the JSON object '{"%s": ...}'`, arg, arg, k)
	}
	if !json.Valid(raw) {
		return nil, mistakef(`arguments are not valid JSON: %s (want an object such as '{"a": 1}', or --arg K=V per argument)`, JSONError(raw))
	}
	if raw[0] != '{' {
		return nil, mistakef(`arguments must be a JSON object, like '{"a": 1}' or '{}', got %s`, JSONKind(raw[0]))
	}
	return raw, nil
}

// Strings decodes a prompt's ARGS_JSON, an object whose values are
// strings, as MCP's prompt arguments are. A value of another kind is a
// *MistakeError naming the argument and how to write it as a string (the
// first such key in order); anything else that does not decode is
// json.Unmarshal's error.
func Strings(arg string) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arg), &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		var s string
		if err := json.Unmarshal(raw[k], &s); err != nil {
			v := bytes.TrimSpace(raw[k])
			return nil, mistakef("argument %q must be a string (MCP prompt arguments are strings), got %s: write '{%s: %s}' or --arg %s=%s",
				k, JSONKind(v[0]), jsonString(k), jsonString(string(v)), k, v)
		}
		out[k] = s
	}
	return out, nil
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Swapped refuses a call's arguments given before the tool's name
// (args: the two words after the command), which would otherwise read as
// a tool name that is not JSON. Its message shows the line meant: cmd (the
// command and the flags it needs, "mcpbridge call --config x.yaml"), then
// the name and the arguments.
func Swapped(cmd string, args []string) error {
	if len(args) != 2 || !strings.HasPrefix(strings.TrimSpace(args[0]), "{") || json.Valid([]byte(args[1])) {
		return nil
	}
	return mistakef("the tool's name comes first, then its arguments: %s %s '%s'", cmd, args[1], args[0])
}

// isKey reports whether k can be the KEY of a KEY=VALUE argument: a
// word, not JSON.
func isKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// JSONKind names the kind of JSON value that starts with c.
func JSONKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// JSONError says why raw, which is not valid JSON, does not parse.
func JSONError(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err.Error()
	}
	return "invalid"
}
