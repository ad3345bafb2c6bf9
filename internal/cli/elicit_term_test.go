package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// personEnv is a run whose person types input; stderr collects what they
// were shown.
func personEnv(input io.Reader, stderr *strings.Builder) *env {
	return &env{IO: IO{Stdin: input, Stderr: stderr, StdinIsTerminal: true, StderrIsTerminal: true}}
}

func formParams(t *testing.T, message, schema string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mode": "form", "message": message, "requestedSchema": json.RawMessage(schema)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkPerson has a person type input to the elicitation params and
// checks the answer and what they were shown.
func checkPerson(t *testing.T, params json.RawMessage, input, want string, shown []string) {
	t.Helper()
	var out strings.Builder
	e := personEnv(strings.NewReader(input), &out)
	got, err := e.elicitPerson(context.Background(), "asker", params)
	if err != nil || string(got) != want {
		t.Errorf("answer %s, %v; want %s\nshown:\n%s", got, err, want, out.String())
	}
	for _, s := range shown {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the person was not shown %q:\n%s", s, out.String())
		}
	}
}

// A person answers the asker's order form field by field: typed values,
// defaults, choices by number or title, and answers the schema refuses
// asked again.
func TestElicitPersonForm(t *testing.T) {
	order := formParams(t, "What would you like?\x1b[2J", mcppeer.OrderSchema)
	for _, c := range []struct {
		name, input, want string
		shown             []string
	}{
		{"typed", "Ada\n3\n3\ny\n1, 3\n\n",
			`{"action":"accept","content":{"extras":["cheese","basil"],"gift":true,"name":"Ada","quantity":3,"size":"l"}}`,
			[]string{"What would you like?\\x1b[2J", "Name (required): who the order is for", "  2) Medium", "a whole number [1]: ", "1-3 [Medium]: ", "y/n [n]: "}},
		{"defaults and retries", "\nA\nAda\n0\nabc\n\nXL\nmedium\nmaybe\n\nolives,4\n\n\n",
			`{"action":"accept","content":{"gift":false,"name":"Ada","quantity":1,"size":"m"}}`,
			[]string{"not accepted: this field is required", "not accepted: \"abc\" is not a whole number", "not accepted: \"XL\" is not one of the choices", "answer y or n", "\"4\" is not one of the choices"}},
		{"declined at the end", "Ada\n\n\n\n\nn\n", `{"action":"decline"}`, nil},
		{"cancelled at the end", "Ada\n\n\n\n\nc\n", `{"action":"cancel"}`, nil},
		{"declined in the middle", "Ada\n:decline\n", `{"action":"decline"}`, nil},
		{"cancelled in the middle", "Ada\n2\n :cancel \n", `{"action":"cancel"}`, nil},
		{"input ended", "Ada\n2", `{"action":"cancel"}`, nil},
		{"asked again until answered", "Ada\n\n\n\n\nwhat\nyes\n", `{"action":"accept","content":{"gift":false,"name":"Ada","quantity":1,"size":"m"}}`, []string{"Send these answers?"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkPerson(t, order, c.input, c.want, c.shown) })
	}
}

// The other SEP-1330 shapes: legacy enumNames, a titled multi-select, a
// number; a form that is not a schema is declined with a reason.
func TestElicitPersonShapes(t *testing.T) {
	schema := `{"type":"object","properties":{
	 "color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]},
	 "tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]},"minItems":1,"default":["b"]},
	 "price":{"type":"number","exclusiveMinimum":0}}}`
	for _, c := range []struct {
		name, schema, input, want string
		shown                     []string
	}{
		{"shapes", schema, "green\n\n-1\n2.5\n\n", `{"action":"accept","content":{"color":"g","price":2.5,"tags":["b"]}}`,
			[]string{"  1) Red", "  2) Beta", "some of 1-2, comma-separated [Beta]: ", "a number: "}},
		{"empty multi-select refused", schema, "1\n,\nalpha\n\n\n", `{"action":"accept","content":{"color":"r","tags":["a"]}}`,
			[]string{"not accepted: "}},
		{"not a schema", `{"type":"object","properties":{"x":{"type":7}}}`, "", `{"action":"decline"}`,
			[]string{"asked for a form mcpbridge cannot show"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkPerson(t, formParams(t, "m", c.schema), c.input, c.want, c.shown) })
	}
}

// A URL elicitation shows the URL, escaped, and waits: Enter accepts.
func TestElicitPersonURL(t *testing.T) {
	params := json.RawMessage(`{"mode":"url","message":"Sign in","url":"https://example.com/a\u001b]8;;x","elicitationId":"1"}`)
	for input, want := range map[string]string{
		"\n":          `{"action":"accept"}`,
		"what\nyes\n": `{"action":"accept"}`,
		"n\n":         `{"action":"decline"}`,
		":cancel\n":   `{"action":"cancel"}`,
		"":            `{"action":"cancel"}`,
	} {
		var shown strings.Builder
		e := personEnv(strings.NewReader(input), &shown)
		got, err := e.elicitPerson(context.Background(), "s", params)
		if err != nil || string(got) != want {
			t.Errorf("input %q: %s, %v; want %s", input, got, err, want)
		}
		if !strings.Contains(shown.String(), "https://example.com/a\\x1b]8;;x") {
			t.Errorf("the URL was not shown escaped:\n%s", shown.String())
		}
	}
}

// Waiting for the person ends with the call's context; an invalid request
// is an error; the terminal is asked only without --elicit and when stdin
// and stderr are terminals.
func TestElicitPersonEdges(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var shown strings.Builder
	e := personEnv(pr, &shown)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.elicitPerson(ctx, "s", formParams(t, "m", mcppeer.OrderSchema)); err != context.Canceled {
		t.Errorf("cancelled wait: %v", err)
	}
	if _, err := e.elicitPerson(context.Background(), "s", json.RawMessage(`[]`)); err == nil {
		t.Error("an invalid request was answered")
	}
	e.elicitMode = elicitDefaults
	defaults := formParams(t, "m", `{"type":"object","properties":{"quantity":{"type":"integer","default":1}}}`)
	if got, _ := e.answer(context.Background(), tool.Ask{Method: tool.AskElicit, Params: defaults}); string(got) != `{"action":"accept","content":{"quantity":1}}` {
		t.Errorf("--elicit defaults with a terminal: %s", got)
	}
	e.elicitMode, e.StdinIsTerminal = "", false
	if e.asksPerson() {
		t.Error("a person is asked without a terminal on stdin")
	}
}
