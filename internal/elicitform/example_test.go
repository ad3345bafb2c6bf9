package elicitform_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
)

// A server's requested schema becomes fields asked in the order it wrote
// them; each typed line is read by its field, and the whole answer is
// checked against the whole schema.
func Example() {
	form, err := elicitform.Parse([]byte(`{
		"type": "object",
		"properties": {
			"size": {"type": "string", "title": "Size", "enum": ["S", "M", "L"]},
			"count": {"type": "integer", "minimum": 1, "default": 1},
			"gift": {"type": "boolean"}
		},
		"required": ["size"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	typed := map[string]string{"size": "2", "count": "", "gift": "y"}
	answer := map[string]any{}
	for _, f := range form.Fields {
		v, ok, err := f.Read(typed[f.Name])
		fmt.Printf("%s (%s): %v %v %v\n", f.Title, f.Hint(), v, ok, err)
		if ok {
			answer[f.Name] = v
		}
	}
	fmt.Println("valid:", form.Validate(answer) == nil)
	_, _, err = form.Fields[1].Read("0")
	fmt.Println("count 0:", err != nil)
	// Output:
	// Size (1-3): M true <nil>
	// count (a whole number [1]): 1 true <nil>
	// gift (y/n): true true <nil>
	// valid: true
	// count 0: true
}

// Defaults answers a form without a person: each field's default, valid
// only when every required field has one.
func ExampleForm_Defaults() {
	form, _ := elicitform.Parse([]byte(`{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"note":{"type":"string"}},"required":["note"]}`))
	content := form.Defaults()
	fmt.Println(content, form.Validate(content) == nil)
	// Output: map[name:Ada] false
}
