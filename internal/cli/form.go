package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A form is an elicitation's requestedSchema as a person fills it in: its
// fields in the order the server wrote them, each checked against its own
// schema as it is typed, and the whole answer against the whole schema.

// fieldKind is how a field is asked and its answer read.
type fieldKind int

const (
	kindText    fieldKind = iota // a string
	kindNumber                   // "number"
	kindInteger                  // "integer"
	kindBool                     // y or n
	kindChoice                   // one of numbered choices (SEP-1330 single-select)
	kindChoices                  // some of numbered choices (multi-select)
)

// choice is one value of an enum with its title (the value when untitled).
type choice struct{ value, title string }

// formField is one property of the requested schema.
type formField struct {
	name, title, description string
	kind                     fieldKind
	required                 bool
	def                      any // the schema default, nil when none
	choices                  []choice
	check                    *jsonschema.Resolved // the property's own schema
}

// form is a requested schema ready to ask.
type form struct {
	fields []*formField
	check  *jsonschema.Resolved // the whole schema
}

// parseForm reads a requestedSchema: a flat object of primitive properties
// (MCP elicitation), each compiled to validate the answers.
func parseForm(raw json.RawMessage) (*form, error) {
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
	f := &form{check: check}
	for _, name := range objectKeys(props.Properties) {
		field, err := newField(name, whole.Properties[name], slices.Contains(whole.Required, name))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		f.fields = append(f.fields, field)
	}
	return f, nil
}

// objectKeys returns the keys of a JSON object in the order written
// (a Go map would lose the order the server chose for its form).
func objectKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

func newField(name string, s *jsonschema.Schema, required bool) (*formField, error) {
	check, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	f := &formField{name: name, title: s.Title, description: s.Description, required: required, check: check}
	if f.title == "" {
		f.title = name
	}
	if len(s.Default) > 0 {
		if err := json.Unmarshal(s.Default, &f.def); err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
	}
	f.kind, f.choices = kindOf(s)
	return f, nil
}

// kindOf tells how a property is asked: the SEP-1330 enum shapes (enum,
// legacy enumNames, oneOf/anyOf of const+title, arrays of those) become
// choices.
func kindOf(s *jsonschema.Schema) (fieldKind, []choice) {
	switch s.Type {
	case "boolean":
		return kindBool, nil
	case "number":
		return kindNumber, nil
	case "integer":
		return kindInteger, nil
	case "array":
		if s.Items != nil {
			if c := choicesOf(s.Items); len(c) > 0 {
				return kindChoices, c
			}
		}
	}
	if c := choicesOf(s); len(c) > 0 {
		return kindChoice, c
	}
	return kindText, nil
}

// choicesOf returns the enum of s: enum (titled by a legacy enumNames),
// or oneOf / anyOf of {const, title}.
func choicesOf(s *jsonschema.Schema) []choice {
	var out []choice
	names, _ := s.Extra["enumNames"].([]any)
	for i, v := range s.Enum {
		c := choice{value: fmt.Sprint(v), title: fmt.Sprint(v)}
		if i < len(names) {
			c.title = fmt.Sprint(names[i])
		}
		out = append(out, c)
	}
	for _, sub := range append(slices.Clone(s.OneOf), s.AnyOf...) {
		if sub.Const != nil {
			c := choice{value: fmt.Sprint(*sub.Const), title: sub.Title}
			if c.title == "" {
				c.title = c.value
			}
			out = append(out, c)
		}
	}
	return out
}

// errRequired is the answer to an empty line for a required field with no
// default.
var errRequired = errors.New("this field is required")

// read turns a typed line into the field's value, checked against its
// schema; ok is false when the field is left out (an empty line, no
// default, not required).
func (f *formField) read(line string) (value any, ok bool, err error) {
	if strings.TrimSpace(line) == "" {
		switch {
		case f.def != nil:
			return f.def, true, nil
		case f.required:
			return nil, false, errRequired
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
func (f *formField) parse(line string) (any, error) {
	s := strings.TrimSpace(line)
	switch f.kind {
	case kindNumber:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return n, nil
	case kindInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return float64(n), nil // JSON's number, as the validator and encoder take it
	case kindBool:
		return parseYesNo(s)
	case kindChoice:
		return f.pick(s)
	case kindChoices:
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
func (f *formField) pick(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.choices) {
		return f.choices[n-1].value, nil
	}
	for _, c := range f.choices {
		if strings.EqualFold(s, c.value) || strings.EqualFold(s, c.title) {
			return c.value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices: type a number from 1 to %d", s, len(f.choices))
}

// pickSome reads choices separated by commas or spaces, each once.
func (f *formField) pickSome(s string) ([]any, error) {
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

// hint is what the prompt says to type.
func (f *formField) hint() string {
	var h string
	switch f.kind {
	case kindNumber:
		h = "a number"
	case kindInteger:
		h = "a whole number"
	case kindBool:
		h = "y/n"
	case kindChoice:
		h = fmt.Sprintf("1-%d", len(f.choices))
	case kindChoices:
		h = fmt.Sprintf("some of 1-%d, comma-separated", len(f.choices))
	default:
		h = "text"
	}
	if f.def != nil {
		h += " [" + f.showDefault() + "]"
	}
	return h
}

// showDefault shows the default as the person would type it.
func (f *formField) showDefault() string {
	switch d := f.def.(type) {
	case bool:
		return map[bool]string{true: "y", false: "n"}[d]
	case string:
		return d
	case []any:
		parts := make([]string, len(d))
		for i, v := range d {
			parts[i] = fmt.Sprint(v)
		}
		return strings.Join(parts, ",")
	}
	b, _ := json.Marshal(f.def)
	return string(b)
}
