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

// offerRequest is a prompts/get or resources/read as offered needs it.
type offerRequest struct {
	method    string // MethodGetPrompt or MethodReadResource
	name      string // the prompt's public name, or the URI
	args      map[string]string
	server    string // a resource's server, "" for a prompt
	state     string // the requestState of a request again, else ""
	responses mcp.InputResponseMap
}

// offer is what a Screen decides r on: a prompt by its public name, a
// resource by its server.
func (r offerRequest) offer() (Offer, string) {
	if r.method == MethodGetPrompt {
		return OfferPrompt, r.name
	}
	return OfferResource, r.server
}

// offerQuestions is an input-required answer to a prompts/get or
// resources/read.
type offerQuestions struct {
	requests mcp.InputRequestMap
	state    string
}

// offered serves r, a prompts/get or resources/read of the client of
// ss, on the path a tools/call takes (admission.go): admitted once per
// logical call (admitOffer: one of the session's call slots, the Gate),
// get, the backend request, runs as it is, or parked when the client is
// asked by input-required results. A request again with the gateway's
// requestState brings its answers to the request parked under it, which
// keeps the admission and the slot of its first round: the retry takes
// neither. The admission is ended, and its slot given back, once, with
// the backend request's true outcome, when get returns, not when it
// parks. offered returns the backend's result as sent, or the questions
// to answer the request with; ErrHidden for one the Gate hides, or one
// again whose state is refused and whose item the caller may not see.
func (g *Gateway) offered(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, r offerRequest, get func(context.Context) (json.RawMessage, error)) (json.RawMessage, *offerQuestions, error) {
	var header http.Header
	if extra != nil {
		header = extra.Header
	}
	// The owner's "tool" names the request, so a state is good only for
	// the request it was given for; no tool's name has a space.
	req := callRequest{session: ss, header: header, params: &mcp.CallToolParamsRaw{Name: r.method + " " + r.name,
		Arguments: mustJSON(r.args), RequestState: r.state, InputResponses: r.responses}}
	var res result
	var err error
	if r.state != "" {
		res, err = g.resume(ctx, req)
		if err == errUnknownState && !g.visibleTo(ctx, header, sessionID(ss))(r.offer()) {
			// Refused for its state, a hidden item would be told from one
			// that does not exist, which is refused for its name.
			err = ErrHidden
		}
	} else {
		res, err = g.admitOffer(ctx, req, r, get)
	}
	if err != nil || res.questions == nil {
		return res.wire, nil, err
	}
	q := &offerQuestions{state: res.state}
	if err := json.Unmarshal(res.questions, &q.requests); err != nil {
		return nil, nil, fmt.Errorf("%s %q: the backend's questions cannot be forwarded: %w", r.method, r.name, err)
	}
	return nil, q, nil
}

// admitOffer admits req, the first round of r (a call slot, then the
// Gate), and runs get: as it is, or parked when the client is asked by
// input-required results, holding the slot until get returns. An item
// hidden from the caller takes no slot: one that does not exist, which
// the SDK answers, takes none, and a caller whose slots are full would
// tell the two apart.
func (g *Gateway) admitOffer(ctx context.Context, req callRequest, r offerRequest, get func(context.Context) (json.RawMessage, error)) (result, error) {
	c := Call{Method: r.method, Tool: r.name, Public: r.name, Server: r.server, Session: sessionID(req.session), Client: clientName(req.session), Header: req.header}
	if !g.visibleTo(ctx, req.header, c.Session)(r.offer()) {
		return result{}, g.enterHidden(ctx, c)
	}
	req.holder = g.holderOf(ctx, req.session)
	s, ofSession := req.share()
	if err := g.admitCall(s, ofSession); err != nil {
		return result{}, err
	}
	gctx, ended, err := g.gate.Enter(ctx, c)
	if err != nil {
		g.releaseCall(s, ofSession)
		return result{}, err
	}
	a := &admission{g: g, req: req, name: r.name, ctx: gctx, ended: ended, gcall: c}
	if !req.asksByResult() {
		defer a.release()
		// Tracked as a call is while the backend works: the client
		// leaving, the session's end or Close ends it (a parked one's
		// rounds are tracked by round).
		ctx, end := g.awaitOn(a.ctx, req.session, first(req.header, streamHeader))
		wire, err := get(ctx)
		end()
		if unrecorded := a.end(result{}, err); unrecorded != nil {
			return result{}, unrecorded
		}
		return result{wire: wire}, err
	}
	caps := req.capabilities()
	res, ran, err := g.park(a.ctx, req, func(callCtx context.Context, pc *parkedCall) (result, error) {
		defer a.release()
		callCtx = tool.WithInputs(tool.WithAsk(callCtx, pc.asker(caps)), pc.inputs(caps))
		wire, err := get(callCtx)
		if unrecorded := a.end(result{}, err); unrecorded != nil { // before its result can reach the client
			return result{}, unrecorded
		}
		return result{wire: wire}, err
	})
	if !ran {
		a.release()
		err := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway is shutting down"}
		_ = a.end(result{}, err) // refused either way
		return result{}, err
	}
	return res, err
}

// enterHidden enters the Gate with c, a request for an item its Screen
// hides from the caller, so that the Gate records its refusal, and
// returns that refusal (ErrHidden: Enter refuses what the Screen hides).
// One the Gate admits after all (its policy changed since the Screen
// decided) is ended unserved, and hidden still.
func (g *Gateway) enterHidden(ctx context.Context, c Call) error {
	_, ended, err := g.gate.Enter(ctx, c)
	if err != nil {
		return err
	}
	_ = ended(Outcome{Failed: true}) // refused either way
	return ErrHidden
}
