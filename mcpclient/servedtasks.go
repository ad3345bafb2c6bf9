package mcpclient

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The client side of tasks (MCP 2025-11-25): a server may ask for an
// elicitation or a sampling request to run as a task ("task" in its
// params); the bridge answers at once with the task, puts the question to
// the consumer meanwhile, and answers the server's tasks/get, tasks/result
// and tasks/cancel about it. go-sdk has none of this: it is answered
// beneath the client session (internal/sdkwire, assumption 28), on the
// connections that carry a whole session (stdio, in-memory).

// maxServedTasks bounds the tasks a server can have the bridge hold.
const maxServedTasks = 32

// servedTasks wraps t so that the server's task-augmented requests and
// tasks/* requests are answered beneath the SDK, and the tasks capability
// is declared for the requests the consumers answer. Without any, t is
// returned as is.
func (s *Server) servedTasks(gen *generation, t mcp.Transport) mcp.Transport {
	reqs := map[string]json.RawMessage{}
	if s.opts.Elicit {
		reqs["elicitation"] = json.RawMessage(`{"create":{}}`)
	}
	if s.samples() {
		reqs["sampling"] = json.RawMessage(`{"createMessage":{}}`)
	}
	if len(reqs) == 0 {
		return t
	}
	caps, _ := json.Marshal(map[string]any{"list": struct{}{}, "cancel": struct{}{}, "requests": reqs})
	gen.served = tasks.NewStore(maxServedTasks)
	gen.taking = &sdkwire.TakingTransport{
		Transport: &sdkwire.CapabilityTransport{Transport: t, Add: map[string]json.RawMessage{"tasks": caps}},
		Take:      s.takeTask(gen),
	}
	return gen.taking
}

func (s *Server) samples() bool { return s.opts.Sample && s.cfg.AllowSampling }

// takeTask returns the requests of the server answered beneath the SDK.
func (s *Server) takeTask(gen *generation) func(*jsonrpc.Request) sdkwire.TakenCall {
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		method := req.Method
		params := append(json.RawMessage(nil), req.Params...)
		switch {
		case tasks.Handles(method):
			return func(ctx context.Context) (json.RawMessage, error) {
				return wireErr(gen.served.Answer(ctx, method, params))
			}
		case !tasks.IsAugmented(params):
			return nil
		case method == tool.AskElicit && s.opts.Elicit, method == tool.AskSample && s.samples():
			return func(context.Context) (json.RawMessage, error) {
				return wireErr(gen.served.Start(gen.ctx, func(ctx context.Context) (json.RawMessage, error) {
					return s.askRaw(ctx, method, params)
				}))
			}
		}
		return nil
	}
}

// wireErr makes a tasks.Error the JSON-RPC error it stands for.
func wireErr(raw json.RawMessage, err error) (json.RawMessage, error) {
	var te *tasks.Error
	if errors.As(err, &te) {
		return nil, &jsonrpc.Error{Code: int64(te.Code), Message: te.Message}
	}
	return raw, err
}
