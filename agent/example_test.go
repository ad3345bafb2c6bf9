package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/tool"
)

// twoSteps is a model that calls add, then answers with its result.
type twoSteps struct{}

func (twoSteps) Stream(_ context.Context, req *agent.Request, on func(agent.Delta)) (*agent.Completion, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		on(agent.Delta{Text: "The sum is " + last.Content.(string) + "."})
		return &agent.Completion{Message: agent.Message{Role: "assistant", Content: "The sum is " + last.Content.(string) + "."}, FinishReason: "stop"}, nil
	}
	call := agent.ToolCall{ID: "1", Type: "function", Function: chatapi.FunctionCall{Name: "add", Arguments: `{"a":2,"b":3}`}}
	return &agent.Completion{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call}}, FinishReason: "tool_calls"}, nil
}

// A harness gives the loop a registry and a model (a *chatapi.Client for
// a real API) and runs prompts.
func Example() {
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{Name: "add", Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
		var in struct{ A, B int }
		if err := json.Unmarshal(args, &in); err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text(fmt.Sprint(in.A + in.B))}}, nil
	}})
	a, _ := agent.New(agent.Options{Model: twoSteps{}, Registry: reg, Events: func(e agent.Event) {
		if e.Type == agent.EventToolCall {
			fmt.Println("calling", e.Name, string(e.Arguments))
		}
	}})
	res, err := a.Run(context.Background(), "What is 2+3?")
	fmt.Println(res.Text, res.Steps, err)
	// Output:
	// calling add {"a":2,"b":3}
	// The sum is 5. 2 <nil>
}

// A harness keeps the person's standing answers as Claude Code does:
// deny patterns first, then allow patterns; the rest is asked.
func ExamplePolicy() {
	p := &agent.Policy{
		Rules: agent.Permissions{Allow: []string{"mcp__time__*"}, Deny: []string{"mcp__fs__delete"}},
		Ask: func(_ context.Context, c agent.Call) (agent.Answer, error) {
			fmt.Println("asked about", c.Name)
			return agent.Deny, nil
		},
		Refused: func(c agent.Call, pattern string) { fmt.Println("refused", c.Name, "by", pattern) },
	}
	for _, name := range []string{"mcp__time__now", "mcp__fs__delete", "mcp__fs__read"} {
		// Tool is the registered tool: a name none has is never asked about.
		ok, _ := p.Approve(context.Background(), agent.Call{Name: name, Tool: tool.Tool{Name: name}})
		fmt.Println(name, ok)
	}
	// Output:
	// mcp__time__now true
	// refused mcp__fs__delete by mcp__fs__delete
	// mcp__fs__delete false
	// asked about mcp__fs__read
	// mcp__fs__read false
}
