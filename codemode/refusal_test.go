package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tool"
)

// refusingView refuses every call as a gateway refuses one over its
// caller's rate limit.
type refusingView struct{ codemode.View }

func (refusingView) Call(context.Context, string, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, errors.New(`rate limit 60/m for "alice" reached; retry in 984ms`)
}

// A call the view refuses rejects its promise with an Error that says
// what refused it: uncaught, the program fails at the line and column of
// the call, in the words of the refusal and nothing of Go's; caught, it is
// an ordinary Error.
func TestRunRefusedCallIsAnErrorAtTheCall(t *testing.T) {
	f := newFixture(t)
	view := refusingView{codemode.RegistryView(f.reg)}
	_, err := codemode.Run(t.Context(), view, "const a = 1;\n  await tools.calc.add({a, b: 2});", codemode.Options{})
	e := wantError(t, err, codemode.ErrThrown, `uncaught Error: tool "mcp__calc__add": rate limit 60/m for "alice" reached; retry in 984ms`)
	if e.Line != 2 || e.Column != 23 || strings.Contains(e.Error(), "GoError") {
		t.Errorf("error = %q at line %d, column %d; want the refusal at line 2, column 23, the call's parenthesis", e.Error(), e.Line, e.Column)
	}
	res, err := codemode.Run(t.Context(), view,
		`try { await tools.call("mcp__calc__add", {a: 1, b: 2}) } catch (e) { return [e.name, e instanceof Error, e.message] }`, codemode.Options{})
	if want := `["Error",true,"tool \"mcp__calc__add\": rate limit 60/m for \"alice\" reached; retry in 984ms"]`; err != nil || string(res.Value) != want {
		t.Errorf("caught: %s, %v; want %s", res.Value, err, want)
	}
}

// A program that ends inside a bracket is reported at its own last line,
// as ending early, not at the brace of the function it is wrapped in.
func TestRunSyntaxErrorAtTheProgramsEnd(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		program      string
		line, column int
	}{
		{"return (", 1, 9},
		{"const xs = [1,\n  2", 2, 4},
		{"if (true) {\n  return 1", 2, 11},
	} {
		_, err := f.run(t, tc.program, codemode.Options{})
		e := wantError(t, err, codemode.ErrSyntax, "the program ended early", "an unclosed bracket")
		if e.Line != tc.line || e.Column != tc.column || strings.Contains(e.Error(), "}") {
			t.Errorf("%q: %q at line %d, column %d; want line %d, column %d", tc.program, e.Error(), e.Line, e.Column, tc.line, tc.column)
		}
	}
	_, err := f.run(t, "const x = 1;\nx = = 2", codemode.Options{})
	if e := wantError(t, err, codemode.ErrSyntax); e.Line != 2 || strings.Contains(e.Error(), "ended early") {
		t.Errorf("a syntax error inside the program: %q at line %d", e.Error(), e.Line)
	}
}
