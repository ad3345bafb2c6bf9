package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
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
			if err := duplicateKey(trimmed); err != nil {
				return d, fmt.Errorf("its %s %w", k, err)
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
// numbers as written. An object that repeats a key is refused: decoded,
// it would keep one of the members, and two texts that differ would have
// one canonical form.
func Canonical(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) > 0 { // More misses a closing ] or }
		return nil, fmt.Errorf("not valid JSON: text after the value")
	}
	if err := duplicateKey(raw); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// container is an object or array that duplicateKey is inside.
type container struct {
	at      string          // its path, as yamlconf.JoinKey writes it
	keys    map[string]bool // the keys seen so far; nil for an array
	wantKey bool            // an object's next token is a key (or its end)
	key     string          // an object's latest key
	n       int             // an array's count of values so far
}

// child is the path of the value that c holds next.
func (c *container) child() string {
	if c.keys != nil {
		return yamlconf.JoinKey(c.at, c.key)
	}
	return fmt.Sprintf("%s[%d]", c.at, c.n)
}

// valueDone moves c past the value it held.
func (c *container) valueDone() {
	c.wantKey = c.keys != nil
	c.n++
}

// duplicateKey returns an error naming the first key that an object of
// the valid JSON text raw repeats, and where; nil when none does. It walks
// raw's first value token by token, without recursion.
func duplicateKey(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*container
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // untested: raw is valid JSON, and the walk ends with its value
		}
		top := innermost(stack)
		if k, ok := tok.(string); ok && top != nil && top.wantKey {
			if top.keys[k] {
				return fmt.Errorf("repeats the key %q in %s: readers of JSON disagree on which member counts, "+
					"so it cannot be pinned (the server must send each key once)", k, where(top.at))
			}
			top.keys[k], top.key, top.wantKey = true, k, false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			c := &container{}
			if top != nil {
				c.at = top.child()
			}
			if tok == json.Delim('{') {
				c.keys, c.wantKey = map[string]bool{}, true
			}
			stack = append(stack, c)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			top = innermost(stack)
		}
		if top == nil {
			return nil // the first value is whole
		}
		top.valueDone()
	}
}

func innermost(stack []*container) *container {
	if len(stack) == 0 {
		return nil
	}
	return stack[len(stack)-1]
}

// where names the object at path.
func where(path string) string {
	if path == "" {
		return "the top-level object"
	}
	return "the object at " + path
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
