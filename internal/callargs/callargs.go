// Package callargs types the KEY=VALUE arguments of a call given one by
// one (the CLI's --arg of call and prompt) by the tool's input schema: a
// number, a boolean, JSON for an object, else the string as given. A key
// the schema does not know or a value of the wrong type is an error before
// any call, with the name meant.
//
// Errors name the flag (--arg K=V) but not the command: the caller says
// which command it was and how it fails (the CLI: a usage error).
package callargs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// argSchema is what Apply needs of a tool's input schema: each property's
// JSON type, whether other keys are allowed, and the definitions a
// property's $ref names.
type argSchema struct {
	Properties           map[string]propSchema `json:"properties"`
	AdditionalProperties *json.RawMessage      `json:"additionalProperties"`
	Defs                 map[string]propSchema `json:"$defs"`
	Definitions          map[string]propSchema `json:"definitions"`
}

// propSchema is what says a property's JSON types: its type, or the
// types of its anyOf or oneOf branches (Optional[str] is anyOf string and
// null), of the definition its $ref names, or of its enum's or const's
// values.
type propSchema struct {
	Type  json.RawMessage   `json:"type"` // a string, or a list of them
	AnyOf []propSchema      `json:"anyOf"`
	OneOf []propSchema      `json:"oneOf"`
	Ref   string            `json:"$ref"`
	Enum  []json.RawMessage `json:"enum"`
	Const json.RawMessage   `json:"const"`
}

// maxRefs bounds the $refs followed for one property (a definition may
// name itself).
const maxRefs = 8

// types are the JSON types p accepts, in the schema's order, [] for any.
func (p propSchema) types(s *argSchema, refs int) []string {
	var one string
	var many []string
	switch {
	case json.Unmarshal(p.Type, &one) == nil:
		return []string{one}
	case json.Unmarshal(p.Type, &many) == nil:
		return many
	case len(p.AnyOf) > 0 || len(p.OneOf) > 0:
		for _, b := range append(slices.Clip(p.AnyOf), p.OneOf...) {
			bt := b.types(s, refs)
			if len(bt) == 0 {
				return nil // a branch of any type
			}
			for _, t := range bt {
				if !slices.Contains(many, t) {
					many = append(many, t)
				}
			}
		}
		return many
	case p.Ref != "" && refs < maxRefs:
		if d, ok := s.ref(p.Ref); ok {
			return d.types(s, refs+1)
		}
	case len(p.Enum) > 0 || p.Const != nil:
		for _, v := range append(slices.Clip(p.Enum), p.Const) {
			if t := jsonType(v); t != "" && !slices.Contains(many, t) {
				many = append(many, t)
			}
		}
		return many
	}
	return nil
}

// ref is the local definition "#/$defs/NAME" or "#/definitions/NAME".
func (s *argSchema) ref(ref string) (propSchema, bool) {
	if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
		d, ok := s.Defs[name]
		return d, ok
	}
	if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok {
		d, ok := s.Definitions[name]
		return d, ok
	}
	return propSchema{}, false
}

// jsonType is the JSON Schema type of the JSON value v ("" for none), an
// integral number "number" (a value of "integer" is one too).
func jsonType(v json.RawMessage) string {
	v = json.RawMessage(strings.TrimSpace(string(v)))
	if len(v) == 0 || !json.Valid(v) {
		return ""
	}
	switch v[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number"
}

// Apply sets each K=V of pairs in args (a JSON object), V typed by tool's
// input schema: a number, an integer, a boolean, null, JSON for an object
// or an array, else the string as given. A key the schema does not know
// (when it lists its properties) or a value of the wrong type is an error.
// With no pairs, args is returned as given.
func Apply(tool string, schema json.RawMessage, args json.RawMessage, pairs []string) (json.RawMessage, error) {
	if len(pairs) == 0 {
		return args, nil
	}
	var s argSchema
	_ = json.Unmarshal(schema, &s) // a schema that does not parse types nothing
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, fmt.Errorf("arguments: %w", err) // untested by the CLI: callArgs checked it is an object
	}
	for _, kv := range pairs {
		k, v, err := Split(kv)
		if err != nil {
			return nil, err
		}
		prop, known := s.Properties[k]
		if !known && (len(s.Properties) > 0 || closed(s)) && !allowsOthers(s) {
			return nil, Unknown(kv, tool, k, slices.Sorted(maps.Keys(s.Properties)))
		}
		raw, err := typedValue(v, prop.types(&s, 0))
		if err != nil {
			return nil, fmt.Errorf("--arg %s: %w", kv, err)
		}
		obj[k] = raw
	}
	return json.Marshal(obj)
}

// Split splits the K=V of one --arg.
func Split(kv string) (k, v string, err error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("--arg %q: want KEY=VALUE", kv)
	}
	return k, v, nil
}

// Unknown is the error of the --arg kv whose key k is none of names, the
// arguments of owner (a tool or a prompt): the name meant, else the list.
func Unknown(kv, owner, k string, names []string) error {
	if m := yamlconf.Suggest(k, names); m != "" {
		return fmt.Errorf("--arg %s: %s has no argument %q: did you mean %q?", kv, owner, k, m)
	}
	if len(names) == 0 {
		return fmt.Errorf("--arg %s: %s takes no arguments", kv, owner)
	}
	return fmt.Errorf("--arg %s: %s has no argument %q (its arguments: %s)", kv, owner, k, strings.Join(names, ", "))
}

// allowsOthers reports whether the schema takes keys beyond its
// properties: additionalProperties absent (JSON Schema's default) counts as
// no, since MCP tools list the arguments they take and a typo should not
// reach the server.
func allowsOthers(s argSchema) bool {
	return s.AdditionalProperties != nil && string(*s.AdditionalProperties) != "false"
}

// closed reports whether the schema says outright that it takes no key
// beyond its properties (additionalProperties: false).
func closed(s argSchema) bool {
	return s.AdditionalProperties != nil && string(*s.AdditionalProperties) == "false"
}

// typedValue is v as the first of types it fits, in the order the schema
// gives them; with no type, JSON when v parses as JSON, else the string.
func typedValue(v string, types []string) (json.RawMessage, error) {
	if len(types) == 0 {
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		return json.Marshal(v)
	}
	for _, t := range types {
		if raw, ok := asType(v, t); ok {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("want %s, got %q", strings.Join(types, " or "), v)
}

// asType is v as a JSON value of type t, if it is one.
func asType(v, t string) (json.RawMessage, bool) {
	switch t {
	case "string":
		raw, _ := json.Marshal(v)
		return raw, true
	case "integer":
		// JSON's form of an integer: no sign but "-", no leading zero.
		if _, err := strconv.ParseInt(v, 10, 64); err == nil && json.Valid([]byte(v)) {
			return json.RawMessage(v), true
		}
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err == nil && json.Valid([]byte(v)) {
			return json.RawMessage(v), true
		}
	case "boolean":
		if v == "true" || v == "false" {
			return json.RawMessage(v), true
		}
	case "null":
		if v == "null" {
			return json.RawMessage(v), true
		}
	case "object", "array":
		open := map[string]byte{"object": '{', "array": '['}[t]
		if s := strings.TrimSpace(v); s != "" && s[0] == open && json.Valid([]byte(s)) {
			return json.RawMessage(s), true
		}
	}
	return nil, false
}
