package codemode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/jsonorder"
)

// maxDepth bounds how deep a schema is rendered; deeper parts are unknown,
// so a pathological schema cannot blow up a declaration.
const maxDepth = 12

// schema is the part of a JSON Schema a declaration renders.
type schema struct {
	Type        json.RawMessage            `json:"type"` // a name or a list of names
	Description string                     `json:"description"`
	Properties  json.RawMessage            `json:"properties"` // kept raw for its key order
	Required    []string                   `json:"required"`
	Items       json.RawMessage            `json:"items"`
	Enum        []json.RawMessage          `json:"enum"`
	Const       json.RawMessage            `json:"const"`
	AnyOf       []json.RawMessage          `json:"anyOf"`
	OneOf       []json.RawMessage          `json:"oneOf"`
	AllOf       []json.RawMessage          `json:"allOf"`
	Ref         string                     `json:"$ref"`
	Defs        map[string]json.RawMessage `json:"$defs"`
	Definitions map[string]json.RawMessage `json:"definitions"`
	Additional  json.RawMessage            `json:"additionalProperties"`
	Nullable    bool                       `json:"nullable"`
}

// typeNames returns the names in a schema's type keyword.
func (s *schema) typeNames() []string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many) // anything else: no type said
	return many
}

// typeWriter renders schemas as TypeScript types within one namespace,
// whose named types (from $ref) it collects.
type typeWriter struct {
	named *namedTypes
	refs  map[string]string // this tool's "#/$defs/X" → the type's name
	defs  map[string]json.RawMessage
}

// namedTypes are the type aliases of one namespace, by name, in the order
// they were first needed.
type namedTypes struct {
	order []string
	body  map[string]string          // name → rendered type ("" while rendering)
	src   map[string]json.RawMessage // name → the schema it was made from
}

func newNamedTypes() *namedTypes {
	return &namedTypes{body: map[string]string{}, src: map[string]json.RawMessage{}}
}

// forTool returns a writer for the schemas of one tool, whose $defs and
// definitions its local $refs name.
func (n *namedTypes) forTool(root json.RawMessage) *typeWriter {
	var s schema
	_ = json.Unmarshal(root, &s)
	defs := map[string]json.RawMessage{}
	for k, v := range s.Definitions {
		defs["#/definitions/"+k] = v
	}
	for k, v := range s.Defs {
		defs["#/$defs/"+k] = v
	}
	return &typeWriter{named: n, refs: map[string]string{}, defs: defs}
}

// typeOf renders raw as a TypeScript type; indent is the indentation of
// the line the type starts on.
func (w *typeWriter) typeOf(raw json.RawMessage, indent string, depth int) string {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "true" || string(raw) == "{}":
		return "unknown"
	case string(raw) == "false":
		return "never"
	case depth > maxDepth:
		return "unknown"
	}
	var s schema
	if json.Unmarshal(raw, &s) != nil {
		return "unknown"
	}
	t := w.bareType(&s, indent, depth)
	if s.Nullable && t != "unknown" {
		t = union([]string{t, "null"})
	}
	return t
}

// bareType is typeOf for a decoded schema, nullable aside.
func (w *typeWriter) bareType(s *schema, indent string, depth int) string {
	switch {
	case s.Ref != "":
		return w.ref(s.Ref, depth)
	case len(s.Const) > 0:
		return literal(s.Const)
	case len(s.Enum) > 0:
		lits := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			lits[i] = literal(e)
		}
		return union(lits)
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		return union(w.each(append(slices.Clone(s.AnyOf), s.OneOf...), indent, depth))
	case len(s.AllOf) > 0:
		return intersection(w.each(s.AllOf, indent, depth))
	}
	names := s.typeNames()
	if len(names) == 0 {
		switch {
		case len(s.Properties) > 0 || len(s.Additional) > 0:
			names = []string{"object"}
		case len(s.Items) > 0:
			names = []string{"array"}
		default:
			return "unknown"
		}
	}
	types := make([]string, len(names))
	for i, n := range names {
		types[i] = w.named1(s, n, indent, depth)
	}
	return union(types)
}

// named1 renders s as the JSON type named n.
func (w *typeWriter) named1(s *schema, n, indent string, depth int) string {
	switch n {
	case "string", "boolean", "null":
		return n
	case "number", "integer":
		return "number"
	case "array":
		return arrayOf(w.typeOf(s.Items, indent, depth+1))
	case "object":
		return w.object(s, indent, depth)
	}
	return "unknown"
}

// each renders every schema of list.
func (w *typeWriter) each(list []json.RawMessage, indent string, depth int) []string {
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = parenthesize(w.typeOf(m, indent, depth+1))
	}
	return out
}

// object renders an object schema, one property a line with its doc.
func (w *typeWriter) object(s *schema, indent string, depth int) string {
	props := jsonorder.Members(s.Properties)
	extra := ""
	if len(s.Additional) > 0 && string(bytes.TrimSpace(s.Additional)) != "false" {
		extra = w.typeOf(s.Additional, indent+"  ", depth+1)
	}
	if len(props) == 0 {
		if extra == "" {
			extra = "unknown"
		}
		return "Record<string, " + extra + ">"
	}
	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, p := range props {
		var ps schema
		_ = json.Unmarshal(p.Value, &ps)
		b.WriteString(docComment(ps.Description, inner))
		b.WriteString(inner + propertyName(p.Name))
		if !slices.Contains(s.Required, p.Name) {
			b.WriteByte('?')
		}
		b.WriteString(": " + w.typeOf(p.Value, inner, depth+1) + ";\n")
	}
	if extra != "" {
		b.WriteString(inner + "[key: string]: " + extra + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

// ref names the type of a local $ref ("#/$defs/X", "#/definitions/X"),
// rendering it among the namespace's named types the first time; any
// other $ref is unknown.
func (w *typeWriter) ref(ref string, depth int) string {
	if name, ok := w.refs[ref]; ok {
		return name
	}
	def, ok := w.defs[ref]
	if !ok {
		return "unknown"
	}
	base := Ident(ref[strings.LastIndexByte(ref, '/')+1:])
	name := base
	for i := 2; ; i++ {
		src, taken := w.named.src[name]
		if !taken || bytes.Equal(src, def) {
			break
		}
		name = base + "_" + strconv.Itoa(i)
	}
	w.refs[ref] = name
	if _, done := w.named.body[name]; done {
		return name
	}
	w.named.src[name] = def
	w.named.body[name] = "" // a recursive reference finds the name
	w.named.order = append(w.named.order, name)
	w.named.body[name] = w.typeOf(def, "    ", depth+1)
	return name
}

// literal renders a JSON value as a TypeScript literal type.
func literal(v json.RawMessage) string {
	var c bytes.Buffer
	if json.Compact(&c, v) != nil {
		return "unknown"
	}
	return c.String()
}

// union joins types with " | ", each once.
func union(types []string) string {
	var out []string
	for _, t := range types {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, " | ")
}

// intersection joins types with " & ", leaving out unknown (a member
// that only constrains, such as {"minLength": 1}).
func intersection(types []string) string {
	types = slices.DeleteFunc(types, func(t string) bool { return t == "unknown" })
	if len(types) == 0 {
		return "unknown"
	}
	return strings.Join(types, " & ")
}

// arrayOf renders an array of elem.
func arrayOf(elem string) string {
	if strings.ContainsAny(elem, " |&{\n") {
		return "Array<" + elem + ">"
	}
	return elem + "[]"
}

// parenthesize wraps a union or intersection, for use inside another.
func parenthesize(t string) string {
	if strings.Contains(t, " | ") || strings.Contains(t, " & ") {
		return "(" + t + ")"
	}
	return t
}

// propertyName renders a property's name, quoted unless an identifier.
func propertyName(name string) string {
	if name != "" && Ident(name) == name {
		return name
	}
	q, _ := json.Marshal(name)
	return string(q)
}

// docComment renders text as a doc comment at indent, "" for no text; a
// "*/" in the text cannot end the comment.
func docComment(text, indent string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "*/", "*\\/"))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return indent + "/** " + text + " */\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		b.WriteString(strings.TrimRight(indent+" * "+strings.TrimRight(l, " \t\r"), " ") + "\n")
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
