//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working for at least a year; servers still ask for them, and the bridge carries them.

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/tasks"
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
			// Worded as the SDK's own give-up, which hintRetries explains.
			if empty >= maxEmptyRounds {
				return nil, fmt.Errorf("multi-round-trip: exceeded maximum load-shedding retries (%d)", maxEmptyRounds)
			}
			if round >= maxRounds {
				return nil, fmt.Errorf("multi-round-trip: exceeded maximum retries (%d)", maxRounds)
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

// answerInputs answers every request of one round, each under its key:
// the round at once to a consumer that takes rounds (tool.InputsFrom: a
// gateway passes it to its client as it came), else each request alone.
func (s *Server) answerInputs(ctx context.Context, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if len(requests) > tasks.MaxInputRequests {
		return nil, fmt.Errorf("the server asks %d questions in one round, more than the %d a client answers", len(requests), tasks.MaxInputRequests)
	}
	if fn := tool.InputsFrom(ctx); fn != nil {
		return s.relayInputs(ctx, fn, requests)
	}
	return s.answerEach(ctx, requests)
}

// answerEach answers every request of one round at once, each alone.
func (s *Server) answerEach(ctx context.Context, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
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
	case *mcp.CreateMessageWithToolsParams:
		// The SDK decodes every sampling request of a round in this
		// shape (InputRequestMap.UnmarshalJSON); another would be refused
		// below as unknown, never answered wrong.
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

// relayInputs puts the requests of one round that the consumer answers to
// fn at once, under the server's keys, and answers the others itself as
// in the middle of a call: roots for an entry without roots: client
// (its own roots), and what the entry does not let through (refused).
func (s *Server) relayInputs(ctx context.Context, fn tool.InputsFunc, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	responses := make(mcp.InputResponseMap, len(requests))
	round := make(map[string]tool.Ask, len(requests))
	for key, ir := range requests {
		a, err := s.relayed(ir)
		switch {
		case err != nil:
			return nil, fmt.Errorf("answering the server's input request %q: %w", key, err)
		case a.Method == "":
			responses[key] = s.rootsFor(ctx, &mcp.ListRootsParams{})
		default:
			round[key] = a
		}
	}
	if len(round) == 0 {
		return responses, nil
	}
	s.log.Info("server input requests", "count", len(round))
	raw, err := s.consult(ctx, func(ctx context.Context, _ tool.Ask) (json.RawMessage, error) {
		answers, err := fn(ctx, round)
		if err != nil {
			return nil, err
		}
		return json.Marshal(answers)
	}, nil, tool.Ask{Method: "inputRequests", Server: s.cfg.ServerName})
	if err != nil {
		return nil, err
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &answers); err != nil {
		return nil, err
	}
	for key, a := range round {
		resp, err := decodeInput(a.Method, answers[key])
		if err != nil {
			return nil, fmt.Errorf("the answer to the server's input request %q: %w", key, err)
		}
		responses[key] = resp
	}
	return responses, nil
}

// relayed is ir as the consumer is asked it; its Method is "" for a
// request the bridge answers itself (roots of an entry without roots:
// client), and the error refuses what the entry does not let through.
func (s *Server) relayed(ir mcp.InputRequest) (tool.Ask, error) {
	var method string
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if !s.opts.Elicit {
			return tool.Ask{}, errors.New("the bridge's consumer takes no elicitation")
		}
		method = tool.AskElicit
	case *mcp.CreateMessageWithToolsParams:
		if !s.samples() {
			return tool.Ask{}, errors.New("sampling is not allowed for this server (allowSampling), or its consumer takes none")
		}
		method = tool.AskSample
	case *mcp.ListRootsParams:
		if !s.cfg.RootsFromClient {
			return tool.Ask{}, nil
		}
		method = tool.AskRoots
	default:
		return tool.Ask{}, fmt.Errorf("unknown input request %T", p)
	}
	params, err := json.Marshal(ir)
	if err != nil {
		return tool.Ask{}, err
	}
	return tool.Ask{Method: method, Params: params, Server: s.cfg.ServerName}, nil
}

// decodeInput decodes the consumer's answer to a request of method.
func decodeInput(method string, raw json.RawMessage) (mcp.InputResponse, error) {
	if len(raw) == 0 {
		return nil, errors.New("the client gave no answer")
	}
	var out mcp.InputResponse
	switch method {
	case tool.AskElicit:
		out = &mcp.ElicitResult{}
	case tool.AskSample:
		out = &mcp.CreateMessageWithToolsResult{}
	default:
		out = &mcp.ListRootsResult{}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}
