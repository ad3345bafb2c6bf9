// Package elicitform reads an MCP elicitation's requestedSchema as a form
// a person fills in: its fields in the order the server wrote them, how
// each is asked (text, number, y/n, numbered choices of the SEP-1330 enum
// shapes), each answer checked against its own schema as it is typed, and
// the whole answer against the whole schema. The CLI's terminal prompts
// and its --elicit defaults answer with it; it is internal because its
// reading of typed lines is a terminal's, which a harness with its own
// interface would not share.
package elicitform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/internal/jsonorder"
)

// Kind is how a field is asked and its answer read.
type Kind int

const (
	Text    Kind = iota // a string
	Number              // "number"
	Integer             // "integer"
	Bool                // y or n
	Choice              // one of numbered choices (SEP-1330 single-select)
	Choices             // some of numbered choices (multi-select)
)

// Option is one value of an enum with its title (the value when untitled).
type Option struct{ Value, Title string }

// Field is one property of the requested schema.
type Field struct {
	Name, Title, Description string // Title is Name when the schema has none
	Kind                     Kind
	Required                 bool
	Default                  any                  // the schema default, nil when none
	Options                  []Option             // of a Choice or Choices field
	check                    *jsonschema.Resolved // the property's own schema
}

// Form is a requested schema ready to ask.
type Form struct {
	Fields []*Field
	check  *jsonschema.Resolved // the whole schema
}

// Validate checks a whole answer (the fields' values by name) against the
// whole schema.
func (f *Form) Validate(content map[string]any) error { return f.check.Validate(content) }

// Defaults is the answer the fields' defaults make (a field without one
// is left out); Validate tells whether it is a valid answer.
func (f *Form) Defaults() map[string]any {
	content := map[string]any{}
	for _, field := range f.Fields {
		if field.Default != nil {
			content[field.Name] = field.Default
		}
	}
	return content
}

// Parse reads a requestedSchema: a flat object of primitive properties
// (MCP elicitation), each compiled to validate the answers.
func Parse(raw json.RawMessage) (*Form, error) {
	var whole jsonschema.Schema
	if err := json.Unmarshal(raw, &whole); err != nil {
		return nil, fmt.Errorf("the requested schema does not parse: %w", err)
	}
	check, err := whole.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("the requested schema is not valid: %w", err)
	}
	var props struct {
		Properties json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &props) // it parsed as a schema above
	f := &Form{check: check}
	// The fields in the order the server chose for its form.
	for _, m := range jsonorder.Members(props.Properties) {
		name := m.Name
		field, err := newField(name, whole.Properties[name], slices.Contains(whole.Required, name))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		f.Fields = append(f.Fields, field)
	}
	return f, nil
}

func newField(name string, s *jsonschema.Schema, required bool) (*Field, error) {
	check, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	f := &Field{Name: name, Title: s.Title, Description: s.Description, Required: required, check: check}
	if f.Title == "" {
		f.Title = name
	}
	if len(s.Default) > 0 {
		if err := json.Unmarshal(s.Default, &f.Default); err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
	}
	f.Kind, f.Options = kindOf(s)
	return f, nil
}

// kindOf tells how a property is asked: the SEP-1330 enum shapes (enum,
// legacy enumNames, oneOf/anyOf of const+title, arrays of those) become
// choices.
func kindOf(s *jsonschema.Schema) (Kind, []Option) {
	switch s.Type {
	case "boolean":
		return Bool, nil
	case "number":
		return Number, nil
	case "integer":
		return Integer, nil
	case "array":
		if s.Items != nil {
			if c := choicesOf(s.Items); len(c) > 0 {
				return Choices, c
			}
		}
	}
	if c := choicesOf(s); len(c) > 0 {
		return Choice, c
	}
	return Text, nil
}

// choicesOf returns the enum of s: enum (titled by a legacy enumNames),
// or oneOf / anyOf of {const, title}.
func choicesOf(s *jsonschema.Schema) []Option {
	var out []Option
	names, _ := s.Extra["enumNames"].([]any)
	for i, v := range s.Enum {
		c := Option{Value: fmt.Sprint(v), Title: fmt.Sprint(v)}
		if i < len(names) {
			c.Title = fmt.Sprint(names[i])
		}
		out = append(out, c)
	}
	for _, sub := range append(slices.Clone(s.OneOf), s.AnyOf...) {
		if sub.Const != nil {
			c := Option{Value: fmt.Sprint(*sub.Const), Title: sub.Title}
			if c.Title == "" {
				c.Title = c.Value
			}
			out = append(out, c)
		}
	}
	return out
}

// ErrRequired is Read's answer to an empty line for a required field with no
// default.
var ErrRequired = errors.New("this field is required")

// Read turns a typed line into the field's value, checked against its
// schema; ok is false when the field is left out (an empty line, no
// default, not required).
func (f *Field) Read(line string) (value any, ok bool, err error) {
	if strings.TrimSpace(line) == "" {
		switch {
		case f.Default != nil:
			return f.Default, true, nil
		case f.Required:
			return nil, false, ErrRequired
		}
		return nil, false, nil
	}
	if value, err = f.parse(line); err != nil {
		return nil, false, err
	}
	if err := f.check.Validate(value); err != nil {
		return nil, false, err
	}
	return value, true, nil
}

// parse reads a non-empty line by the field's kind.
func (f *Field) parse(line string) (any, error) {
	s := strings.TrimSpace(line)
	switch f.Kind {
	case Number:
		n, err := strconv.ParseFloat(s, 64)
		switch {
		case math.IsInf(n, 0) || math.IsNaN(n): // inf, nan, 1e999: JSON has no such number
			return nil, fmt.Errorf("%q is not a finite number: type one such as 2.5 or -1e6", s)
		case err != nil:
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	case Integer:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return float64(n), nil // JSON's number, as the validator and encoder take it
	case Bool:
		return parseYesNo(s)
	case Choice:
		return f.pick(s)
	case Choices:
		return f.pickSome(s)
	}
	return line, nil
}

func parseYesNo(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "y", "yes", "true":
		return true, nil
	case "n", "no", "false":
		return false, nil
	}
	return false, fmt.Errorf("answer y or n, not %q", s)
}

// pick reads one choice: its number, value or title.
func (f *Field) pick(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	for _, c := range f.Options {
		if strings.EqualFold(s, c.Value) || strings.EqualFold(s, c.Title) {
			return c.Value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices: type a number from 1 to %d", s, len(f.Options))
}

// pickSome reads choices separated by commas or spaces, each once.
func (f *Field) pickSome(s string) ([]any, error) {
	out := []any{}
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, err := f.pick(item)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, any(v)) {
			out = append(out, v)
		}
	}
	return out, nil
}

// Hint is what a prompt says to type, with the default in brackets.
func (f *Field) Hint() string {
	var h string
	switch f.Kind {
	case Number:
		h = "a number"
	case Integer:
		h = "a whole number"
	case Bool:
		h = "y/n"
	case Choice:
		h = fmt.Sprintf("1-%d", len(f.Options))
	case Choices:
		h = fmt.Sprintf("some of 1-%d, comma-separated", len(f.Options))
	default:
		h = "text"
	}
	if f.Default != nil {
		h += " [" + f.showDefault() + "]"
	}
	return h
}

// showDefault shows the default as the person would type it: a choice
// by the title the list shows it under.
func (f *Field) showDefault() string {
	switch d := f.Default.(type) {
	case bool:
		return map[bool]string{true: "y", false: "n"}[d]
	case string:
		return f.titleOf(d)
	case []any:
		parts := make([]string, len(d))
		for i, v := range d {
			parts[i] = f.titleOf(fmt.Sprint(v))
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(f.Default)
	return string(b)
}

// titleOf is the title of the option whose value is v; v itself when no
// option has it (a field without options).
func (f *Field) titleOf(v string) string {
	for _, o := range f.Options {
		if o.Value == v {
			return o.Title
		}
	}
	return v
}
