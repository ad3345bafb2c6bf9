package sdkwire

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// ToolsWithExecution returns res as the result of a receiving middleware
// for tools/list, marshaled with "execution" set to execution on each
// tool named in names: the 2025-11-25 execution.taskSupport, which
// mcp.Tool has no field for. The SDK marshals the result a middleware
// returns with its own MarshalJSON and stamps its fields on the embedded
// value (assumption 14). res itself when names is empty.
func ToolsWithExecution(res *mcp.ListToolsResult, names map[string]bool, execution json.RawMessage) mcp.Result {
	if len(names) == 0 {
		return res
	}
	return &execTools{ListToolsResult: res, names: names, execution: execution}
}

// execTools is a ListToolsResult whose named tools get an execution
// member. Embedding keeps it an mcp.Result whose unexported methods are
// the embedded value's.
type execTools struct {
	*mcp.ListToolsResult
	names     map[string]bool
	execution json.RawMessage
}

// MarshalJSON marshals the SDK's result and adds execution to the named
// tools.
func (r *execTools) MarshalJSON() ([]byte, error) {
	typed, err := json.Marshal(r.ListToolsResult)
	if err != nil {
		return nil, fmt.Errorf("marshaling tools/list result: %w", err)
	}
	var members map[string]json.RawMessage
	var tools []json.RawMessage
	if err := json.Unmarshal(typed, &members); err != nil {
		return nil, fmt.Errorf("re-reading tools/list result: %w", err) // unreachable: the SDK marshals an object
	}
	if err := json.Unmarshal(members["tools"], &tools); err != nil {
		return typed, nil // no tools array: nothing to add to
	}
	for i, t := range tools {
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &named) != nil || !r.names[named.Name] {
			continue
		}
		grown := append([]byte(nil), t[:len(t)-1]...)
		grown = append(append(append(grown, `,"execution":`...), r.execution...), '}')
		tools[i] = grown
	}
	if members["tools"], err = serverwire.MarshalUnescaped(tools); err != nil {
		return nil, err
	}
	return serverwire.MarshalUnescaped(members)
}
