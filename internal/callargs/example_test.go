package callargs_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/callargs"
)

// A person's KEY=VALUE pairs typed by a tool's input schema, over the
// arguments already given as JSON.
func ExampleApply() {
	schema := json.RawMessage(`{"type": "object", "properties": {
		"a": {"type": "number"}, "b": {"type": "number"}, "note": {"type": "string"}}}`)
	args, err := callargs.Apply("add", schema, json.RawMessage(`{"a": 1}`), []string{"b=41", "note=42"})
	fmt.Println(string(args), err)
	_, err = callargs.Apply("add", schema, json.RawMessage(`{}`), []string{"nte=1"})
	fmt.Println(err)
	// Output:
	// {"a":1,"b":41,"note":"42"} <nil>
	// --arg nte=1: add has no argument "nte": did you mean "note"?
}
