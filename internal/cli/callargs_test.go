package cli

import (
	"encoding/json"
	"strings"
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
		{[]string{"n=abc"}, `call: --arg n=abc: want number, got "abc"`},
		{[]string{"i=1.5"}, `call: --arg i=1.5: want integer, got "1.5"`},
		{[]string{"b=yes"}, `call: --arg b=yes: want boolean, got "yes"`},
		{[]string{"o=[1]"}, `call: --arg o=[1]: want object, got "[1]"`},
		{[]string{"anx=1"}, `call: --arg anx=1: t has no argument "anx": did you mean "any"?`},
		{[]string{"zzzzz=1"}, `call: --arg zzzzz=1: t has no argument "zzzzz" (its arguments: a, any, b, i, n, ns, o, s)`},
		{[]string{"novalue"}, `call: --arg "novalue": want KEY=VALUE`},
	}
	for _, tc := range tests {
		got, err := applyArgs("t", json.RawMessage(schema), json.RawMessage(`{"s": "from JSON"}`), tc.pairs)
		text := string(got)
		if err != nil {
			if !isUsage(err) {
				t.Errorf("%v: not a usage error: %v", tc.pairs, err)
			}
			text = err.Error()
		}
		if text != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.pairs, text, tc.want)
		}
	}
	// A schema that lets in other keys takes them, as JSON when they are.
	got, err := applyArgs("t", json.RawMessage(`{"type":"object","properties":{"a":{}},"additionalProperties":true}`), json.RawMessage(`{}`), []string{"x=1"})
	if err != nil || string(got) != `{"x":1}` {
		t.Errorf("additionalProperties: %s %v", got, err)
	}
}

// call --arg and --timeout on a real server.
func TestCallArgAndTimeout(t *testing.T) {
	inDir(t, fixtureEntries(t, "f"))
	r := mcpbridge(t, "", "call", "mcp__f__add", "--arg", "a=2", "--arg", "b=40")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "42" {
		t.Errorf("--arg: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__add", `{"a": 1}`, "--arg", "b=1")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "2" {
		t.Errorf("JSON and --arg: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__add", "--arg", "a=two", "--arg", "b=1")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `--arg a=two: want number, got "two"`) || r.stdout != "" {
		t.Errorf("a bad value: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__slow", "--arg", "ms=60000", "--timeout", "200ms")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "no result within --timeout 200ms") {
		t.Errorf("--timeout: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "mcp__f__add", "--timeout", "soon"); r.code != ExitUsage || !strings.Contains(r.stderr, `--timeout "soon"`) {
		t.Errorf("a bad --timeout: %+v", r)
	}
}
