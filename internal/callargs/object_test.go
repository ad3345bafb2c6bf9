package callargs

import (
	"errors"
	"strings"
	"testing"
)

// Only a JSON object is a call's arguments; every other input is a
// mistake that says what to write, and stdin is read no further than the
// bound.
func TestReadObject(t *testing.T) {
	if got, err := ReadObject(` {"a": 1} `, nil); err != nil || string(got) != `{"a": 1}` {
		t.Errorf("an object: %s, %v", got, err)
	}
	if got, err := ReadObject("-", strings.NewReader(`{}`)); err != nil || string(got) != `{}` {
		t.Errorf("from stdin: %s, %v", got, err)
	}
	for arg, want := range map[string]string{
		"a=1":       "are KEY=VALUE, not JSON: write --arg a=1",
		`{"a": `:    "not valid JSON: unexpected end of JSON input",
		`[1]`:       "must be a JSON object, like '{\"a\": 1}' or '{}', got an array",
		`"x"`:       "got a string",
		`null`:      "got null",
		`true`:      "got a boolean",
		`3`:         "got a number",
		`{"a":1}=x`: "not valid JSON",
	} {
		_, err := ReadObject(arg, nil)
		if _, ok := errors.AsType[*MistakeError](err); !ok || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadObject(%q) = %v, want a mistake saying %q", arg, err, want)
		}
	}
	big := strings.NewReader(`{"a": "` + strings.Repeat("x", MaxJSONBytes) + `"}`)
	if _, err := ReadObject("-", big); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("too big: %v", err)
	}
	if err := Swapped("mcpbridge call", []string{`{"a": 1}`, "mcp__s__t"}); err == nil || !strings.Contains(err.Error(), `mcpbridge call mcp__s__t '{"a": 1}'`) {
		t.Errorf("swapped: %v", err)
	}
	if err := Swapped("mcpbridge call", []string{"mcp__s__t", `{"a": 1}`}); err != nil {
		t.Errorf("in order: %v", err)
	}
}

func TestStrings(t *testing.T) {
	got, err := Strings(`{"a": "x", "b": ""}`)
	if err != nil || len(got) != 2 || got["a"] != "x" {
		t.Errorf("Strings of strings = %v, %v", got, err)
	}
	for in, want := range map[string]string{
		`{"n": 3, "a": true}`: `argument "a" must be a string (MCP prompt arguments are strings), got a boolean: write '{"a": "true"}' or --arg a=true`,
		`{"o": {"k": [1]}}`:   `argument "o" must be a string (MCP prompt arguments are strings), got an object: write '{"o": "{\"k\": [1]}"}' or --arg o={"k": [1]}`,
	} {
		_, err := Strings(in)
		if _, ok := err.(*MistakeError); !ok || err.Error() != want {
			t.Errorf("Strings(%s) = %v, want %q", in, err, want)
		}
	}
	if _, err := Strings(`[1]`); err == nil {
		t.Error("Strings of an array: no error")
	}
}
