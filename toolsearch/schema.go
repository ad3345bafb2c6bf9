package toolsearch

import (
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

// schemaWords is what an input schema says about a tool's parameters.
type schemaWords struct {
	names []string // property names, at any depth
	texts []string // their descriptions, titles and string enum values
}

// paramWords walks the "properties" of an input schema, recursively and
// within the bounds above. The schema is decoded once; a member of
// another type than a schema gives it (a "properties" that is not an
// object, a "description" that is not a string) is left out, not an
// error. Property names are visited in sorted order so that the bounds
// cut the same ones every time.
func paramWords(schema json.RawMessage) schemaWords {
	var w schemaWords
	if len(schema) == 0 || len(schema) > maxSchemaBytes {
		return w
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return w
	}
	w.walk(v, 0)
	return w
}

func (w *schemaWords) walk(v any, depth int) {
	if depth >= maxSchemaDepth {
		return
	}
	if list, ok := v.([]any); ok { // "items" as a tuple
		w.walkEach(list, depth)
		return
	}
	n, ok := v.(map[string]any)
	if !ok { // true, false, or not a schema
		return
	}
	if depth > 0 {
		w.texts = appendNonEmpty(w.texts, str(n["title"]), str(n["description"]))
		enum, _ := n["enum"].([]any)
		w.texts = appendEnum(w.texts, enum)
	}
	props, _ := n["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if len(w.names) >= maxParams {
			return
		}
		w.names = append(w.names, name)
		w.walk(props[name], depth+1)
	}
	w.walk(n["items"], depth+1)
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := n[key].([]any)
		w.walkEach(list, depth)
	}
}

// walkEach walks the schemas of list one level down.
func (w *schemaWords) walkEach(list []any, depth int) {
	for _, sub := range list {
		w.walk(sub, depth+1)
	}
}

// str is v if it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

func appendNonEmpty(dst []string, ss ...string) []string {
	for _, s := range ss {
		if s != "" {
			dst = append(dst, s)
		}
	}
	return dst
}

func appendEnum(dst []string, enum []any) []string {
	for i, v := range enum {
		if i == maxEnumValues {
			break
		}
		if s, ok := v.(string); ok {
			dst = append(dst, s)
		}
	}
	return dst
}
