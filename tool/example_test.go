package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpbridge/mcpbridge/tool"
)

func greet(greeting string) tool.Tool {
	return tool.Tool{
		Name:        "greet",
		Description: "Greets someone by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			var in struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return tool.Output{}, fmt.Errorf("decode arguments: %w", err)
			}
			if in.Name == "" {
				return tool.Output{}, errors.New(`"name" is required`)
			}
			return tool.Output{Content: []tool.Content{tool.Text(greeting + ", " + in.Name + "!")}}, nil
		},
	}
}

func ExampleRegistry() {
	r := tool.NewRegistry()
	if _, err := r.Register(greet("Hello")); err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	res, _ := r.Execute(ctx, "greet", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(res.Text())

	res, _ = r.Execute(ctx, "greet", nil)
	fmt.Println(res.Text())

	res, err := r.Execute(ctx, "wave", nil)
	fmt.Println(res.Text(), errors.Is(err, tool.ErrNotFound))

	_, err = r.Register(greet("Hi"))
	fmt.Println(err, errors.Is(err, tool.ErrConflict))
	// Output:
	// Hello, Ada!
	// Error: "name" is required
	// Error: unknown tool "wave" true
	// tool "greet" is already registered true
}

func ExampleRegistry_Replace() {
	r := tool.NewRegistry()
	h, _ := r.Register(greet("Hello"))

	// A producer whose tool list changed swaps its group in one step; the
	// model never sees the tool missing.
	h, err := r.Replace(h, greet("Good morning"))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := r.Execute(context.Background(), "greet", json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(res.Text(), r.Len())

	h.Unregister()
	fmt.Println(r.Len())
	// Output:
	// Good morning, Ada! 1
	// 0
}

func ExampleRegistry_Watch() {
	r := tool.NewRegistry()
	changed, cancel := r.Watch()
	defer cancel()

	h, _ := r.Register(greet("Hello"))
	h.Unregister()

	// Two changes, one wake-up: read the current state, don't count.
	<-changed
	fmt.Println(r.Version(), r.Len())
	select {
	case <-changed:
		fmt.Println("second wake-up")
	default:
		fmt.Println("coalesced")
	}
	// Output:
	// 2 0
	// coalesced
}

func ExampleResult_Text() {
	res := tool.Result{Content: []tool.Content{tool.Text("line one"), tool.Text("line two")}}
	fmt.Println(res.Text())
	// Output:
	// line one
	// line two
}

// A consumer that can wait asks for background work; a source that offers
// it (an MCP server's optional task tool) runs the call as a task, and
// one that does not runs it as usual.
func ExampleWithBackground() {
	r := tool.NewRegistry()
	r.Register(tool.Tool{
		Name:        "report",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(fmt.Sprint("background: ", tool.BackgroundFrom(ctx)))}}, nil
		},
	})
	res, _ := r.Execute(tool.WithBackground(context.Background()), "report", nil)
	fmt.Println(res.Text())
	// Output: background: true
}
