//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working for at least a year; 2025-11-25 servers ask them, and the gateway carries them.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// A backend's questions during a call the HTTP fast path serves go to the
// client on that call's stream, as the SDK sends them on the stream of
// the request they belong to, and the client's answer, POSTed on its
// session, comes back here before the SDK's handler. Their ids are
// strings of the gateway's own ("mcpbridge-ask-N"): the SDK numbers its
// requests, so the two never meet.

// fastAskPrefix begins the ids of the fast path's questions.
const fastAskPrefix = "mcpbridge-ask-"

// fastAsks are the questions awaiting the client's answer, by session and
// id. The zero value is ready to use.
type fastAsks struct {
	mu      sync.Mutex
	seq     uint64                                // guarded by mu
	waiting map[fastAskKey]chan *jsonrpc.Response // buffer 1; guarded by mu
}

type fastAskKey struct {
	session string
	id      jsonrpc.ID
}

// open registers a question of session and returns its id and where its
// answer comes.
func (a *fastAsks) open(session string) (jsonrpc.ID, chan *jsonrpc.Response) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	id, _ := jsonrpc.MakeID(fastAskPrefix + strconv.FormatUint(a.seq, 10))
	if a.waiting == nil {
		a.waiting = make(map[fastAskKey]chan *jsonrpc.Response)
	}
	ch := make(chan *jsonrpc.Response, 1)
	a.waiting[fastAskKey{session, id}] = ch
	return id, ch
}

// close forgets a question.
func (a *fastAsks) close(session string, id jsonrpc.ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.waiting, fastAskKey{session, id})
}

// answer hands resp to the question of session it answers, and reports
// whether there was one.
func (a *fastAsks) answer(session string, resp *jsonrpc.Response) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := fastAskKey{session, resp.ID}
	ch, ok := a.waiting[key]
	if ok {
		delete(a.waiting, key)
		ch <- resp
	}
	return ok
}

// fastAnswer takes a POST that answers one of the fast path's questions,
// and reports whether it did: accepted with 202, as the SDK's handler
// accepts a response.
func (g *Gateway) fastAnswer(w http.ResponseWriter, r *http.Request) bool {
	if !fastHeaders(r.Header, true) {
		return false
	}
	resp, ok := sdkwire.PeekResponse(bodyOf(r))
	if !ok || !g.fastAsks.answer(r.Header.Get("Mcp-Session-Id"), resp) {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// request sends a question on the stream and returns the client's answer;
// when ctx ends first the client is told the question is cancelled, as the
// SDK tells it. A stateless POST's stream asks nothing: it fails as the
// SDK's session of the POST fails (sdkwire's TestContractOneRequestStateless
// and TestContractPerRequestStateless).
func (s *fastStream) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if s.asks == nil {
		if s.version >= sdkwire.PerRequestVersion {
			return nil, sdkwire.PerRequestAskError(method, s.version)
		}
		return nil, sdkwire.OneRequestAskError(method)
	}
	id, answered := s.asks.open(s.session)
	defer s.asks.close(s.session, id)
	data, err := sdkwire.RequestJSON(id, method, params)
	if err != nil {
		return nil, err
	}
	s.send(ctx, data)
	select {
	case resp := <-answered:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		if data, err := sdkwire.NotificationJSON("notifications/cancelled", &mcp.CancelledParams{RequestID: id.Raw(), Reason: ctx.Err().Error()}); err == nil {
			s.send(context.WithoutCancel(ctx), data)
		}
		return nil, ctx.Err()
	}
}

// askStream asks method of the client on s and decodes its answer.
func askStream[R any](ctx context.Context, s *fastStream, method string, params any) (*R, error) {
	raw, err := s.request(ctx, method, params)
	if err != nil {
		return nil, err
	}
	res := new(R)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("decoding the client's answer to %s: %w", method, err)
	}
	return res, nil
}

// ListRoots asks the client for its roots, as ServerSession.ListRoots.
func (s *fastStream) ListRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	return askStream[mcp.ListRootsResult](ctx, s, "roots/list", p)
}

// CreateMessageWithTools asks the client to sample, as
// ServerSession.CreateMessageWithTools (messages never null).
func (s *fastStream) CreateMessageWithTools(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	if p == nil {
		p = &mcp.CreateMessageWithToolsParams{}
	}
	if p.Messages == nil {
		copied := *p
		copied.Messages = []*mcp.SamplingMessageV2{}
		p = &copied
	}
	return askStream[mcp.CreateMessageWithToolsResult](ctx, s, "sampling/createMessage", p)
}

// errElicitOnFastPath: the fast path takes no session whose client
// offers elicitation (elicitsNothing), and ask declines it for the others.
var errElicitOnFastPath = errors.New("gateway: elicitation is not asked on the HTTP fast path")

// Elicit is never called: see errElicitOnFastPath.
func (s *fastStream) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, errElicitOnFastPath // unreachable: ask declines first
}
