package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/tool"
)

// strictTypes are the JSON Schema types strict function calling accepts.
var strictTypes = []string{"object", "string", "number", "integer", "boolean", "array", "null"}

// StrictSchema returns schema as strict function calling wants it, and
// whether it can be: every object lists properties, all of them required,
// and closes itself (additionalProperties false is added when absent; an
// object below the top that lists none must say false itself);
// types are the plain ones, anyOf and $ref allowed. A schema with an
// optional property, an open object or a map cannot be strict without
// changing what the tool accepts, so it is not.
func StrictSchema(schema json.RawMessage) (json.RawMessage, bool) {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return nil, false
	}
	if !strictNode(v, true) {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// strictNode checks (and closes) one schema node.
func strictNode(v any, top bool) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return !top
	}
	if t, ok := m["type"].(string); ok && !slices.Contains(strictTypes, t) || top && m["type"] != nil && m["type"] != "object" {
		return false
	}
	if m["type"] == "object" || m["properties"] != nil || top {
		if !strictObject(m, top) {
			return false
		}
	}
	for _, k := range []string{"items"} {
		if sub, ok := m[k]; ok && !strictNode(sub, false) {
			return false
		}
	}
	for _, k := range []string{"anyOf", "$defs", "definitions"} {
		if !strictEach(m[k]) {
			return false
		}
	}
	return true
}

func strictEach(v any) bool {
	switch v := v.(type) {
	case []any:
		for _, s := range v {
			if !strictNode(s, false) {
				return false
			}
		}
	case map[string]any:
		for _, s := range v {
			if !strictNode(s, false) {
				return false
			}
		}
	}
	return true
}

// strictObject checks an object node: properties all required, closed.
// Below the top, one that lists no properties and does not close itself
// is free-form (environment variables, headers): closing it would lock it
// to {}. At the top such a schema means a tool without arguments.
func strictObject(m map[string]any, top bool) bool {
	props, _ := m["properties"].(map[string]any)
	if props == nil && (m["properties"] != nil || !top && m["additionalProperties"] != false) {
		return false
	}
	if ap, ok := m["additionalProperties"]; ok && ap != false {
		return false
	}
	if m["type"] == nil {
		m["type"] = "object"
	}
	m["additionalProperties"] = false
	req, _ := m["required"].([]any)
	if len(req) != len(props) {
		return false
	}
	for _, r := range req {
		name, ok := r.(string)
		if _, found := props[name]; !ok || !found {
			return false
		}
	}
	if props == nil {
		m["properties"] = map[string]any{}
	}
	return strictEach(props)
}

// strictCache keeps each tool's chat form between steps, so a step with
// an unchanged catalog costs no schema work.
type strictCache struct {
	mu    sync.Mutex
	forms map[string]form
	told  map[string]bool
}

type form struct {
	schema json.RawMessage // as registered, to notice a change
	strict json.RawMessage // nil when the schema cannot be strict
}

func newStrictCache() *strictCache {
	return &strictCache{forms: map[string]form{}, told: map[string]bool{}}
}

// chatTools returns tools as chat tools, in their order; with strict, the
// tools whose schemas allow it are strict, and loose names the others.
func (s *strictCache) chatTools(tools []tool.Tool, strict bool) (out []chatapi.Tool, loose []string) {
	out = make([]chatapi.Tool, len(tools))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range tools {
		ct := chattools.Of(t)
		out[i] = chatapi.Tool{Type: "function", Function: chatapi.Function{Name: ct.Function.Name, Description: ct.Function.Description, Parameters: ct.Function.Parameters}}
		if !strict {
			continue
		}
		f, ok := s.forms[t.Name]
		if !ok || !bytes.Equal(f.schema, ct.Function.Parameters) {
			f = form{schema: ct.Function.Parameters}
			f.strict, _ = StrictSchema(ct.Function.Parameters)
			s.forms[t.Name] = f
		}
		if f.strict == nil {
			loose = append(loose, t.Name)
			continue
		}
		out[i].Function.Parameters, out[i].Function.Strict = f.strict, true
	}
	return out, loose
}

// tell reports whether the loose set has names not reported yet, and
// remembers them, so the fallback is told once per tool.
func (s *strictCache) tell(loose []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	news := false
	for _, n := range loose {
		if !s.told[n] {
			s.told[n], news = true, true
		}
	}
	return news
}
