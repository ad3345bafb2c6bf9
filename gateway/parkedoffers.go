package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A backend asks in the result of a prompts/get or resources/read as in
// a tool's (MCP 2026-07-28: any request may be answered input-required).
// Its client, when asked by input-required results, is asked the same
// way as for a tools/call: the backend request runs parked, and the
// client's request again, with the gateway's requestState and the
// answers, goes on with it. The state is bound to the caller and to the
// request (method, name, arguments), as a call's is to its tool and
// arguments.

// offerRequest is a prompts/get or resources/read as parkedOffer needs
// it.
type offerRequest struct {
	method    string // MethodGetPrompt or MethodReadResource
	name      string // the prompt's public name, or the URI
	args      map[string]string
	state     string // the requestState of a request again, else ""
	responses mcp.InputResponseMap
}

// offerQuestions is an input-required answer to a prompts/get or
// resources/read.
type offerQuestions struct {
	requests mcp.InputRequestMap
	state    string
}

// offered runs get, the backend request of r, for the client of ss: as
// it is, or parked when the client is asked by input-required results.
// It returns the backend's result as sent, or the questions to answer
// the request with.
func (g *Gateway) offered(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, r offerRequest, get func(context.Context) (json.RawMessage, error)) (json.RawMessage, *offerQuestions, error) {
	if !asksByResult(ss) {
		wire, err := get(ctx)
		return wire, nil, err
	}
	var header http.Header
	if extra != nil {
		header = extra.Header
	}
	// The owner's "tool" names the request, so a state is good only for
	// the request it was given for; no tool's name has a space.
	req := callRequest{session: ss, header: header, params: &mcp.CallToolParamsRaw{Name: r.method + " " + r.name,
		Arguments: mustJSON(r.args), RequestState: r.state, InputResponses: r.responses}}
	res, err := g.parkedOffer(ctx, req, get)
	if err != nil || res.questions == nil {
		return res.wire, nil, err
	}
	q := &offerQuestions{state: res.state}
	if err := json.Unmarshal(res.questions, &q.requests); err != nil {
		return nil, nil, fmt.Errorf("%s %q: the backend's questions cannot be forwarded: %w", r.method, r.name, err)
	}
	return nil, q, nil
}

// parkedOffer runs get parked, or brings req's answers to the request
// parked under its requestState.
func (g *Gateway) parkedOffer(ctx context.Context, req callRequest, get func(context.Context) (json.RawMessage, error)) (result, error) {
	if req.params.RequestState != "" {
		return g.resume(ctx, req)
	}
	caps := clientCapabilities(req.session)
	res, ran, err := g.park(ctx, req, func(callCtx context.Context, pc *parkedCall) (result, error) {
		callCtx = tool.WithInputs(tool.WithAsk(callCtx, pc.asker(caps)), pc.inputs(caps))
		wire, err := get(callCtx)
		return result{wire: wire}, err
	})
	if !ran {
		return result{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway is shutting down"}
	}
	return res, err
}
