//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging, sampling and roots (SEP-2577) but keeps them working for at least a year; 2025-11-25 servers use them, and the bridge carries them.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// maxQueuedNotices bounds the notifications of one call waiting to be
// sent; past it the newest replaces the last queued, so memory stays
// bounded against a flood and the latest progress always goes out.
const maxQueuedNotices = 64

// notice is one notification for the client of a call: a progress update
// or a log message.
type notice struct {
	progress *mcp.ProgressNotificationParams
	log      *mcp.LoggingMessageParams
}

// forwarder sends what a backend says during one call (progress, log
// messages) to the client that made it, in order, before the call's
// result. The backend's reader must not block (tool.ProgressFunc,
// tool.LogFunc), so the callbacks only queue (bounded), and a goroutine,
// started with the first notice, sends the queue; stop sends what is left.
type forwarder struct {
	ctx     context.Context // the call's: it carries the request for HTTP routing
	session notifier
	log     *slog.Logger

	mu      sync.Mutex
	queued  []notice // guarded by mu
	started bool     // the goroutine runs; guarded by mu
	closed  bool     // stop ran; guarded by mu

	// Made with the goroutine, under mu; read by it and by stop after.
	wake    chan struct{} // buffer 1
	stopped chan struct{} // closed by stop
	done    chan struct{} // closed when run returned
}

// notifier sends a call's notifications to its client: the client's
// session (*mcp.ServerSession), or a taken 2026-07-28 call's perRequestPeer.
type notifier interface {
	NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error
	Log(context.Context, *mcp.LoggingMessageParams) error
}

// newForwarder returns a forwarder of its own (a call's is in its
// callRun: forwarding).
func newForwarder(ctx context.Context, session notifier, log *slog.Logger) *forwarder {
	f := forwarding(ctx, session, log)
	return &f
}

// forwarding is a forwarder of a call's notifications to session, as a
// value: a call keeps it with the rest of what it makes (callRun).
func forwarding(ctx context.Context, session notifier, log *slog.Logger) forwarder {
	// The channels and the goroutine come with the first notice: most
	// calls have none, and this is every call's path.
	return forwarder{ctx: ctx, session: session, log: log}
}

// progress returns the call's tool.ProgressFunc, for the client's token.
func (f *forwarder) progress(token any) tool.ProgressFunc {
	return func(p tool.Progress) {
		f.queue(notice{progress: &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message}})
	}
}

// logged is the call's tool.LogFunc: the backend's notifications/message
// params, sent on to the client (at the level the client asked for).
func (f *forwarder) logged(params json.RawMessage) {
	m := &mcp.LoggingMessageParams{}
	if json.Unmarshal(params, m) != nil {
		return
	}
	f.queue(notice{log: m})
}

func (f *forwarder) queue(n notice) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return // after the result: too late
	}
	if len(f.queued) < maxQueuedNotices {
		f.queued = append(f.queued, n)
	} else {
		f.queued[len(f.queued)-1] = n
	}
	if !f.started {
		f.started = true
		f.wake, f.stopped, f.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go f.run()
	}
	wake := f.wake
	f.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default: // a send is due already and will take the whole queue
	}
}

func (f *forwarder) run() {
	defer close(f.done)
	for {
		select {
		case <-f.wake:
			f.flush()
		case <-f.stopped:
			f.flush() // the last notices go out before the result
			return
		case <-f.ctx.Done():
			return
		}
	}
}

func (f *forwarder) flush() {
	f.mu.Lock()
	queued := f.queued
	f.queued = nil
	f.mu.Unlock()
	for _, n := range queued {
		if f.ctx.Err() != nil {
			return
		}
		var err error
		if n.progress != nil {
			err = f.session.NotifyProgress(f.ctx, n.progress)
		} else {
			err = f.session.Log(f.ctx, n.log)
		}
		if err != nil {
			f.log.Debug("forwarding a notification failed", "err", err)
			return
		}
	}
}

// stop ends forwarding and waits for the goroutine, so no notice follows
// the call's result.
func (f *forwarder) stop() {
	f.mu.Lock()
	started := f.started
	f.closed = true // a late notice is dropped
	f.mu.Unlock()
	if started {
		close(f.stopped)
		<-f.done
	}
}

// declined is the answer to an elicitation the client cannot take.
var declined = json.RawMessage(`{"action":"decline"}`)

// MaxAsksPerSession bounds the backends' requests (elicitation, sampling,
// roots) waiting for one client's answer at once: past it an elicitation
// is declined and the others fail, so backends cannot pile requests on a
// client that does not answer.
const MaxAsksPerSession = 16

// asker returns the tool.AskFunc of a call by session: a backend's
// elicitation and sampling requests go to the client that made the call,
// at most MaxAsksPerSession at once. An elicitation the client cannot take
// (no capability, protocol 2026-07-28, where the gateway cannot ask in
// the middle of a call, or no slot left) is declined; sampling without the
// capability fails. peer, for a taken 2026-07-28 call, says what its
// client offers (its session's initialize params do not); nil otherwise.
// A call without a session takes no slot.
func (g *Gateway) asker(session *mcp.ServerSession, peer *perRequestPeer) tool.AskFunc {
	return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		if session == nil {
			return g.ask(ctx, session, peer, a)
		}
		if !g.takeAsk(session) {
			g.log.Debug("a backend's request refused: too many wait for this client", "method", a.Method, "limit", MaxAsksPerSession)
			if a.Method == tool.AskElicit {
				return declined, nil
			}
			return nil, fmt.Errorf("too many requests wait for this client's answer (the gateway's limit is %d)", MaxAsksPerSession)
		}
		defer g.releaseAsk(session)
		return g.ask(ctx, session, peer, a)
	}
}

// ask forwards a to the client of session (see asker for peer). A client
// on protocol 2026-07-28 is asked only through input-required results
// (runParkable); a call that cannot park (a served tool's inner call,
// CallFor) refuses it with the SDK's words, as the SDK's session would
// refuse to send it.
func (g *Gateway) ask(ctx context.Context, session *mcp.ServerSession, peer *perRequestPeer, a tool.Ask) (json.RawMessage, error) {
	caps, version := clientCapabilities(session), protocolOf(session)
	if peer != nil {
		caps, version = peer.caps, peer.version
	}
	if r := refuseAsk(caps, a); r != nil {
		return r.answer, r.err
	}
	if version >= serverwire.PerRequestVersion {
		if a.Method == tool.AskElicit {
			return declined, nil
		}
		return nil, serverwire.PerRequestAskError(a.Method, version)
	}
	switch a.Method {
	case tool.AskElicit:
		return forward(ctx, a.Params, session.Elicit, func(err error) (json.RawMessage, error) {
			switch {
			case ctx.Err() != nil: // no one declined: the call or the question ended first
				return nil, fmt.Errorf("the question ended before the client answered: %w", context.Cause(ctx))
			case g.sessionEnded(session) || connectionGone(err): // no one declined: the client left
				return nil, fmt.Errorf("the client's session ended before it answered: %w", err)
			}
			g.log.Debug("elicitation declined: the client could not be asked", "err", err)
			return declined, nil
		})
	case tool.AskSample:
		return forward(ctx, a.Params, session.CreateMessageWithTools, func(err error) (json.RawMessage, error) { return nil, err })
	default: // roots (refuseAsk lets nothing else through)
		// A client without roots fails it: the backend then gets its
		// entry's configured roots.
		return forward(ctx, a.Params, session.ListRoots, func(err error) (json.RawMessage, error) { return nil, err })
	}
}

// refusal is the answer to a backend's request the client is not asked.
type refusal struct {
	answer json.RawMessage
	err    error
}

// refuseAsk returns the answer to a backend's request a client with caps
// cannot take: an elicitation without the capability is declined,
// sampling without it (or with tools, without sampling.tools) fails, and
// so does a method the gateway does not forward; nil when the client may
// be asked.
func refuseAsk(caps *mcp.ClientCapabilities, a tool.Ask) *refusal {
	switch a.Method {
	case tool.AskElicit:
		if caps == nil || caps.Elicitation == nil {
			return &refusal{answer: declined}
		}
	case tool.AskSample:
		if caps == nil || caps.Sampling == nil {
			return &refusal{err: errors.New("the gateway's client offers no sampling")}
		}
		if caps.Sampling.Tools == nil && samplesWithTools(a.Params) {
			// MCP 2025-11-25: tools only to a client that declares sampling.tools.
			return &refusal{err: errors.New("the gateway's client offers sampling without tools (no sampling.tools capability), and this request has tools or toolChoice")}
		}
	case tool.AskRoots:
	default:
		return &refusal{err: fmt.Errorf("the gateway does not forward %s", a.Method)}
	}
	return nil
}

// samplesWithTools reports whether sampling params carry tools or a
// toolChoice.
func samplesWithTools(params json.RawMessage) bool {
	var p struct {
		Tools      json.RawMessage `json:"tools"`
		ToolChoice json.RawMessage `json:"toolChoice"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false // forward's decoding says what is wrong
	}
	present := func(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }
	return present(p.Tools) || present(p.ToolChoice)
}

// forward decodes params, sends them to the client with send, and encodes
// the answer; failed handles send's error.
func forward[P, R any](ctx context.Context, params json.RawMessage, send func(context.Context, *P) (*R, error), failed func(error) (json.RawMessage, error)) (json.RawMessage, error) {
	p := new(P)
	if err := json.Unmarshal(params, p); err != nil {
		return nil, fmt.Errorf("invalid request params: %w", err)
	}
	res, err := send(ctx, p)
	if err != nil {
		return failed(err)
	}
	return json.Marshal(res)
}

// protocolOf is the protocol version session's client was served
// (initialize's, or a 2026-07-28 request's _meta), "" without one.
func protocolOf(session *mcp.ServerSession) string {
	if session == nil {
		return ""
	}
	if p := session.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// clientCapabilities returns what the client of session said it offers.
func clientCapabilities(session *mcp.ServerSession) *mcp.ClientCapabilities {
	if session == nil {
		return nil // a stateless POST's: the SDK's path gives it none
	}
	if p := session.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

// sessionEnded reports whether the client session has ended (nil: a call
// without a session, which has none to end).
func (g *Gateway) sessionEnded(session *mcp.ServerSession) bool {
	if session == nil {
		return false
	}
	select {
	case <-g.ends.of(session):
		return true
	default:
		return false
	}
}

// connectionGone reports whether err, the failure of a request to the
// client, is no answer at all (its input ended, its connection failed)
// rather than the client answering with an error or the transport
// refusing the request (both JSON-RPC errors).
func connectionGone(err error) bool {
	_, answered := errors.AsType[*jsonrpc.Error](err)
	return !answered
}
