package toolsearch

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Bounds on what an input schema contributes, so that one tool with a
// huge schema costs no more to index than a few ordinary ones.
const (
	maxSchemaDepth = 6  // levels of nested properties, items and *Of
	maxParams      = 64 // property names per tool
	maxEnumValues  = 16 // string enum values per property
	maxSchemaBytes = 64 << 10
)

// schemaNode is the part of a JSON Schema that describes parameters. A
// member of another type than expected is left out, not an error.
type schemaNode struct {
	Description string                     `json:"description"`
	Title       string                     `json:"title"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Items       json.RawMessage            `json:"items"`
	Enum        []json.RawMessage          `json:"enum"`
	AnyOf       []json.RawMessage          `json:"anyOf"`
	OneOf       []json.RawMessage          `json:"oneOf"`
	AllOf       []json.RawMessage          `json:"allOf"`
}

// schemaWords is what an input schema says about a tool's parameters.
type schemaWords struct {
	names []string // property names, at any depth
	texts []string // their descriptions, titles and string enum values
}

// paramWords walks the "properties" of an input schema, recursively and
// within the bounds above. Property names are visited in sorted order so
// that the bounds cut the same ones every time.
func paramWords(schema json.RawMessage) schemaWords {
	var w schemaWords
	if len(schema) == 0 || len(schema) > maxSchemaBytes {
		return w
	}
	w.walk(schema, 0)
	return w
}

func (w *schemaWords) walk(raw json.RawMessage, depth int) {
	raw = bytes.TrimSpace(raw)
	if depth >= maxSchemaDepth || len(raw) == 0 {
		return
	}
	if raw[0] == '[' { // "items" as a tuple
		var list []json.RawMessage
		_ = json.Unmarshal(raw, &list)
		w.walkEach(list, depth)
		return
	}
	if raw[0] != '{' { // true, false, or not a schema
		return
	}
	var n schemaNode
	_ = json.Unmarshal(raw, &n) // a member of an unexpected type is skipped
	if depth > 0 {
		w.texts = appendNonEmpty(w.texts, n.Title, n.Description)
		w.texts = appendEnum(w.texts, n.Enum)
	}
	names := make([]string, 0, len(n.Properties))
	for name := range n.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if len(w.names) >= maxParams {
			return
		}
		w.names = append(w.names, name)
		w.walk(n.Properties[name], depth+1)
	}
	w.walk(n.Items, depth+1)
	w.walkEach(n.AnyOf, depth)
	w.walkEach(n.OneOf, depth)
	w.walkEach(n.AllOf, depth)
}

// walkEach walks the schemas of list one level down.
func (w *schemaWords) walkEach(list []json.RawMessage, depth int) {
	for _, sub := range list {
		w.walk(sub, depth+1)
	}
}

func appendNonEmpty(dst []string, ss ...string) []string {
	for _, s := range ss {
		if s != "" {
			dst = append(dst, s)
		}
	}
	return dst
}

func appendEnum(dst []string, enum []json.RawMessage) []string {
	for i, v := range enum {
		if i == maxEnumValues {
			break
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			dst = append(dst, s)
		}
	}
	return dst
}
