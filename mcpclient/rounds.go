//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working for at least a year; servers still ask for them, and the bridge carries them.

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A server of protocol 2026-07-28 asks in a call's result: an
// input-required result whose inputRequests the client answers by calling
// again with inputResponses and the server's requestState (multi
// round-trip, SEP-2322). The SDK's own middleware for it answers
// roots/list from the client's fixed roots, never asking anyone, so a
// gateway's client could not be asked for its roots (roots: client). The
// bridge runs its own loop instead, which answers every request as the
// same request made in the middle of a call would be: elicitation and
// sampling through the call's consumer, roots per the entry's roots.

// Bounds of one call's rounds, as the SDK's middleware has them: a server
// that keeps asking, or keeps answering input-required with nothing to
// answer (load shedding), gets an error instead of a loop.
const (
	maxRounds      = 10
	maxEmptyRounds = 3
)

// multiRoundTrip is the client's sending middleware that answers the
// input-required results of tools/call, prompts/get and resources/read
// and sends the request again with the answers (see above); the SDK's is
// off (clientFeatures).
func (s *Server) multiRoundTrip(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		empty := 0
		for round := 1; ; round++ {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			requests, state, ok := inputRequired(res)
			if !ok {
				return res, nil
			}
			if len(requests) == 0 {
				empty++
			}
			if empty >= maxEmptyRounds || round >= maxRounds {
				return nil, fmt.Errorf("server %q still asks for input after %d rounds of a %s: giving up", s.cfg.ServerName, round, method)
			}
			responses, err := s.answerInputs(ctx, requests)
			if err != nil {
				return nil, err
			}
			if req, err = retried(req, responses, state); err != nil {
				return nil, err
			}
		}
	}
}

// inputRequired returns the input requests and requestState of res, an
// input-required result; false for any other result.
func inputRequired(res mcp.Result) (mcp.InputRequestMap, string, bool) {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	}
	return nil, "", false
}

// retried is req again with responses and state, its params copied: the
// caller's own are never changed. Built as the SDK builds its own
// retries, the request's params have the interface type.
func retried(req mcp.Request, responses mcp.InputResponseMap, state string) (mcp.Request, error) {
	cs, ok := req.GetSession().(*mcp.ClientSession)
	if !ok {
		return nil, fmt.Errorf("an input-required result of a request of a %T, which the bridge cannot send again", req.GetSession())
	}
	var params mcp.Params
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		params = &cp
	case *mcp.CallToolParamsRaw:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		params = &cp
	case *mcp.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		params = &cp
	case *mcp.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		params = &cp
	default:
		return nil, fmt.Errorf("an input-required result of a request with %T, which the bridge cannot send again", p)
	}
	return &mcp.ClientRequest[mcp.Params]{Session: cs, Params: params}, nil
}

// answerInputs answers every request of one round at once (a consumer
// that collects a call's questions, a gateway's parked call, then sees
// them together), each under its key.
func (s *Server) answerInputs(ctx context.Context, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	var (
		mu        sync.Mutex
		wg        sync.WaitGroup
		responses = make(mcp.InputResponseMap, len(requests))
		errs      []error
	)
	for key, ir := range requests {
		wg.Go(func() {
			resp, err := s.answerInput(ctx, ir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("answering the server's input request %q: %w", key, err))
				return
			}
			responses[key] = resp
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return responses, nil
}

// answerInput answers one input request as the same request in the
// middle of a call is answered.
func (s *Server) answerInput(ctx context.Context, ir mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if !s.opts.Elicit {
			return nil, errors.New("the bridge's consumer takes no elicitation")
		}
		res := &mcp.ElicitResult{}
		return res, s.ask(ctx, tool.AskElicit, p, res)
	case *mcp.CreateMessageParams:
		return s.answerSampling(ctx, withTools(p))
	case *mcp.CreateMessageWithToolsParams:
		return s.answerSampling(ctx, p)
	case *mcp.ListRootsParams:
		return s.rootsFor(ctx, p), nil
	}
	return nil, fmt.Errorf("unknown input request %T", ir)
}

// answerSampling answers a sampling request, when the entry allows it.
func (s *Server) answerSampling(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (mcp.InputResponse, error) {
	if !s.samples() {
		return nil, errors.New("sampling is not allowed for this server (allowSampling), or its consumer takes none")
	}
	res := &mcp.CreateMessageWithToolsResult{}
	return res, s.ask(ctx, tool.AskSample, p, res)
}

// withTools is a sampling request of the plain shape in the shape with
// tools, which the consumer is handed.
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Content: []mcp.Content{m.Content}, Role: m.Role})
	}
	return &mcp.CreateMessageWithToolsParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens,
		Messages: msgs, Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
}
