package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Kind is what a definition defines.
type Kind string

// The kinds of definitions pinned.
const (
	KindTool   Kind = "tool"
	KindPrompt Kind = "prompt"
)

// Def is one definition of a server, ready to pin or to check.
type Def struct {
	Kind Kind
	// Name is the server's own (raw) name of the tool or prompt: the key
	// of its pin, stable whatever public name the bridge gives it.
	Name string
	// Canonical is the definition's canonical JSON; SHA256 its hex digest.
	Canonical json.RawMessage
	SHA256    string
}

// ToolDef is the definition of t, named by its raw name.
func ToolDef(t tool.Tool) (Def, error) {
	return newDef(KindTool, t.Origin.Name, map[string]any{
		"name": t.Origin.Name, "title": t.Title, "description": t.Description,
		"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "annotations": t.Annotations,
	})
}

// PromptDef is the definition of p, named by its raw name.
func PromptDef(p tool.Prompt) (Def, error) {
	var args json.RawMessage
	if len(p.Arguments) > 0 {
		args, _ = json.Marshal(p.Arguments) // strings and a bool always marshal
	}
	return newDef(KindPrompt, p.Origin.Name, map[string]any{
		"name": p.Origin.Name, "title": p.Title, "description": p.Description, "arguments": args,
	})
}

// newDef drops the empty fields of fields (so that a server that starts
// sending "title": "" does not change its pin) and canonicalizes the rest.
// On error the Def still names its kind and name.
func newDef(kind Kind, name string, fields map[string]any) (Def, error) {
	d := Def{Kind: kind, Name: name}
	obj := map[string]any{}
	for k, v := range fields {
		switch v := v.(type) {
		case string:
			if v != "" {
				obj[k] = v
			}
		case json.RawMessage:
			trimmed := bytes.TrimSpace(v)
			if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
				continue
			}
			if !json.Valid(trimmed) {
				return d, fmt.Errorf("its %s is not valid JSON", k)
			}
			obj[k] = json.RawMessage(trimmed)
		}
	}
	b, err := json.Marshal(obj)
	if err == nil {
		b, err = Canonical(b)
	}
	if err != nil {
		return d, err // untested: valid parts always marshal
	}
	d.Canonical, d.SHA256 = b, digest(b)
	return d, nil
}

// Canonical returns the JSON text raw in canonical form: no insignificant
// space, object keys sorted, strings with only the escapes JSON needs,
// numbers as written.
func Canonical(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not valid JSON: text after the value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func digest(canon []byte) string {
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// Changed names the top-level fields in which the canonical definitions
// was and now differ, in sorted order ("description", "inputSchema").
func Changed(was, now json.RawMessage) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(was, &a) != nil || json.Unmarshal(now, &b) != nil {
		return []string{"definition"}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(union(a, b))) {
		if !bytes.Equal(a[k], b[k]) {
			out = append(out, k)
		}
	}
	return out
}

func union(a, b map[string]json.RawMessage) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
