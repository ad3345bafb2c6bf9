package serverwire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The Mcp-Param-* headers of a 2026-07-28 tools/call (SEP-2243): a
// client mirrors each argument its tool's input schema annotates with
// x-mcp-header as the header Mcp-Param-{Name}, so that what stands
// between it and the server (a balancer, a WAF, a rate limiter) can act
// on the argument without reading the body. A server refuses a call
// whose headers say other than its body, as the SDK's handler does
// (parity check P9): an intermediary would have acted on a lie.

// paramHeaderPrefix starts the name of every parameter header.
const paramHeaderPrefix = "Mcp-Param-"

// base64Prefix and base64Suffix wrap a header value sent as base64.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// maxSafeInteger bounds the integers a header may carry: those a double
// holds exactly.
const maxSafeInteger = 1<<53 - 1

// headerBinding is an argument (its path of property names) that a
// header mirrors.
type headerBinding struct {
	path   []string
	header string
}

// ParamHeadersProblem is what is wrong with the Mcp-Param-* headers h of
// a tools/call with params, for a tool whose input schema is schema, ""
// for nothing: a header for an absent or null argument, an annotated
// argument without its header, a header that is not valid base64 where
// it says it is, an argument that is not an integer, string or boolean,
// or a header whose value is not the argument's.
func ParamHeadersProblem(h http.Header, params, schema json.RawMessage) string {
	bindings := collectBindings(members(schema)["properties"], nil, nil)
	if len(bindings) == 0 {
		return ""
	}
	args := members(members(params)["arguments"])
	for _, b := range bindings {
		if problem := bindingProblem(h, args, b); problem != "" {
			return problem
		}
	}
	return ""
}

// collectBindings appends to out every annotated property of the
// properties object props, at any depth under prefix.
func collectBindings(props json.RawMessage, prefix []string, out []headerBinding) []headerBinding {
	for name, prop := range members(props) {
		path := append(append([]string(nil), prefix...), name)
		of := members(prop)
		var header string
		if json.Unmarshal(of["x-mcp-header"], &header) == nil && header != "" {
			out = append(out, headerBinding{path: path, header: header})
		}
		out = collectBindings(of["properties"], path, out)
	}
	return out
}

// members is the JSON object raw by member name (names compared exactly,
// as the protocol's), nil for anything else.
func members(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// bindingProblem checks one binding's header against args.
func bindingProblem(h http.Header, args map[string]json.RawMessage, b headerBinding) string {
	name := paramHeaderPrefix + b.header
	got := h.Get(name)
	where := strings.Join(b.path, ".")
	arg, ok := lookupArgument(args, b.path)
	if !ok || string(arg) == "null" {
		if got != "" {
			return fmt.Sprintf("header mismatch: unexpected %s header for absent or null parameter %q", name, where)
		}
		return ""
	}
	if got == "" {
		return fmt.Sprintf("header mismatch: missing %s header for parameter %q", name, where)
	}
	decoded, ok := decodeHeaderValue(got)
	if !ok {
		return fmt.Sprintf("header mismatch: %s header contains invalid Base64 encoding", name)
	}
	want, ok := primitiveOf(arg)
	if !ok {
		return fmt.Sprintf("header mismatch: %s header present but body parameter %q is not a primitive type", name, where)
	}
	if !headerMatches(decoded, want) {
		return fmt.Sprintf("header mismatch: %s header value '%s' does not match body value", name, got)
	}
	return ""
}

// lookupArgument is the value at path in args.
func lookupArgument(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		if !ok {
			return nil, false
		}
		cur, ok = members(cur)[part]
	}
	return cur, ok
}

// primitiveOf is the argument raw as a header carries it: a string, a
// boolean, or an integer within the safe range.
func primitiveOf(raw json.RawMessage) (any, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case string, bool:
		return v, true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return nil, false
		}
		return int64(v), true
	}
	return nil, false
}

// headerMatches reports whether the decoded header value says want.
func headerMatches(header string, want any) bool {
	switch want := want.(type) {
	case int64:
		n, err := strconv.ParseFloat(header, 64)
		return err == nil && n == math.Trunc(n) && math.Abs(n) <= maxSafeInteger && int64(n) == want
	case bool:
		return header == strconv.FormatBool(want)
	case string:
		return header == want
	}
	return false
}

// decodeHeaderValue is the value of a header, unwrapped from base64 when
// it is so wrapped; false for a wrapped value that is not valid base64.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return v, true
	}
	decoded, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(decoded), true
}
