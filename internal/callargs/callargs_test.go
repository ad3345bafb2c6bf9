package callargs

import (
	"encoding/json"
	"testing"
)

// --arg values are typed by the tool's input schema.
func TestApplyArgs(t *testing.T) {
	const schema = `{"type": "object", "properties": {
		"n": {"type": "number"}, "i": {"type": "integer"}, "b": {"type": "boolean"},
		"s": {"type": "string"}, "o": {"type": "object"}, "a": {"type": "array"},
		"ns": {"type": ["null", "string"]}, "any": {}}}`
	tests := []struct {
		pairs []string
		want  string // the arguments, or the usage error's text
	}{
		{[]string{"n=2.5", "i=3", "b=true", "s=42"}, `{"b":true,"i":3,"n":2.5,"s":"42"}`},
		{[]string{`o={"k": [1]}`, "a=[1, 2]", "ns=null", "any=7"}, `{"a":[1,2],"any":7,"ns":null,"o":{"k":[1]},"s":"from JSON"}`},
		{[]string{"ns=text", "any=plain words", "s="}, `{"any":"plain words","ns":"text","s":""}`},
		{[]string{"n=abc"}, `--arg n=abc: want number, got "abc"`},
		{[]string{"i=1.5"}, `--arg i=1.5: want integer, got "1.5"`},
		{[]string{"b=yes"}, `--arg b=yes: want boolean, got "yes"`},
		{[]string{"o=[1]"}, `--arg o=[1]: want object, got "[1]"`},
		{[]string{"anx=1"}, `--arg anx=1: t has no argument "anx": did you mean "any"?`},
		{[]string{"zzzzz=1"}, `--arg zzzzz=1: t has no argument "zzzzz" (its arguments: a, any, b, i, n, ns, o, s)`},
		{[]string{"novalue"}, `--arg "novalue": want KEY=VALUE`},
	}
	for _, tc := range tests {
		got, err := Apply("t", json.RawMessage(schema), json.RawMessage(`{"s": "from JSON"}`), tc.pairs)
		text := string(got)
		if err != nil {
			text = err.Error()
		}
		if text != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.pairs, text, tc.want)
		}
	}
	// A schema that lets in other keys takes them, as JSON when they are.
	got, err := Apply("t", json.RawMessage(`{"type":"object","properties":{"a":{}},"additionalProperties":true}`), json.RawMessage(`{}`), []string{"x=1"})
	if err != nil || string(got) != `{"x":1}` {
		t.Errorf("additionalProperties: %s %v", got, err)
	}
}

// Split and Unknown are the checks Apply makes of one --arg, for a caller
// typing a prompt's string arguments itself.
func TestSplitUnknown(t *testing.T) {
	if k, v, err := Split("style=a=b"); k != "style" || v != "a=b" || err != nil {
		t.Errorf("Split: %q %q %v", k, v, err)
	}
	if _, _, err := Split("=x"); err == nil || err.Error() != `--arg "=x": want KEY=VALUE` {
		t.Errorf("Split without a key: %v", err)
	}
	if err := Unknown("x=1", "p", "x", nil); err.Error() != "--arg x=1: p takes no arguments" {
		t.Errorf("Unknown with no names: %v", err)
	}
}

// A property typed without "type" (Optional[str] as anyOf string and
// null, a $ref to a definition, an enum) is typed by what it allows, not
// guessed as JSON; an integer is JSON's form of one, else the next type;
// a schema closed to other keys refuses an unknown one though it lists
// no properties.
func TestApplyArgsTypedWithoutType(t *testing.T) {
	const schema = `{"type": "object", "properties": {
		"q": {"anyOf": [{"type": "string"}, {"type": "null"}]},
		"r": {"$ref": "#/$defs/Mode"}, "old": {"$ref": "#/definitions/Count"},
		"e": {"enum": ["1", "2"]}, "k": {"enum": [1, 2]}, "loop": {"$ref": "#/$defs/Loop"},
		"zip": {"type": ["integer", "string"]}, "i": {"type": "integer"}},
		"$defs": {"Mode": {"oneOf": [{"type": "string"}]}, "Loop": {"$ref": "#/$defs/Loop"}},
		"definitions": {"Count": {"type": "integer"}}}`
	tests := []struct {
		pairs []string
		want  string
	}{
		{[]string{"q=2024", "r=true", "e=1", "k=2", "old=3"}, `{"e":"1","k":2,"old":3,"q":"2024","r":"true"}`},
		{[]string{"zip=02134"}, `{"zip":"02134"}`},
		{[]string{"zip=-7"}, `{"zip":-7}`},
		{[]string{"i=+5"}, `--arg i=+5: want integer, got "+5"`},
		{[]string{"i=007"}, `--arg i=007: want integer, got "007"`},
		{[]string{"loop=[1]"}, `{"loop":[1]}`},
	}
	for _, tc := range tests {
		got, err := Apply("t", json.RawMessage(schema), json.RawMessage(`{}`), tc.pairs)
		text := string(got)
		if err != nil {
			text = err.Error()
		}
		if text != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.pairs, text, tc.want)
		}
	}
	_, err := Apply("t", json.RawMessage(`{"type":"object","additionalProperties":false}`), json.RawMessage(`{}`), []string{"x=1"})
	if err == nil || err.Error() != `--arg x=1: t takes no arguments` {
		t.Errorf("a closed schema without properties: %v", err)
	}
}
