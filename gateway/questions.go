//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working for at least a year; 2025-11-25 servers use them, and the bridge carries them.

package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A client of protocol 2026-07-28 can be asked nothing in the middle of a
// call: a server asks it by answering the call with an input-required
// result, and the client calls again with its answers (multi round-trip,
// SEP-2322). Backends ask the gateway either way: the 2025-11-25 way
// (elicitation/create or sampling/createMessage in the middle of the
// call) or with input-required results, which mcpclient's multi
// round-trip loop hands over a round at once (tool.InputsFunc,
// questionrounds.go). Both reach the parked call, so the gateway treats
// them alike: the call runs on, its questions waiting, while the client's
// request is answered
// input-required with the gateway's own requestState; the client's next
// call with that state brings the answers to the waiting questions, and
// waits again for the result or the next questions (README.md,
// "Serving"; docs/operations.md §2 on replicas).

const (
	// DefaultQuestionWait is how long a parked call waits for its client
	// to call again with the answers, when neither the Gate
	// (QuestionWaiter) nor Options.QuestionWait says. Short: a client
	// answers a question it can answer within seconds, and an abandoned
	// call holds its backend call, its place among MaxParkedCalls and, on
	// a 2025-11-25 backend, a question that makes the backend's next
	// question harder to attribute.
	DefaultQuestionWait = 30 * time.Second
	// MaxParkedCalls bounds the calls parked at once on the gateway, and
	// MaxParkedPerClient those of one client (see placeFor): past either,
	// a backend's questions are refused (an elicitation declined, the
	// others failed), as when its client cannot be asked, so one client
	// cannot hold every place.
	MaxParkedCalls     = 256
	MaxParkedPerClient = 8
)

// QuestionWaiter is a Gate that also says how long a parked call waits
// for its client's answers (serve's Keeper: the gateway entry's
// questionWaitMs); 0 leaves it to Options.QuestionWait. Asked at each
// park, so a reload changes the wait of the next round.
type QuestionWaiter interface {
	QuestionWait() time.Duration
}

// questionWait is how long a call parked now waits for its client.
func (g *Gateway) questionWait() time.Duration {
	var d time.Duration
	if w, ok := gateAs[QuestionWaiter](g.gate); ok {
		d = w.QuestionWait()
	}
	return cmp.Or(d, g.opts.QuestionWait, DefaultQuestionWait)
}

// errQuestionExpired ends a parked call whose client did not come back.
var errQuestionExpired = errors.New("the client did not answer the server's questions in time")

// errClientLeft ends a call whose client left while it waited for the
// call's result or questions.
var errClientLeft = errors.New("the client left before the call's result")

// errUnknownState refuses a requestState the gateway does not hold for
// the caller: forged, altered, used already, expired, issued to another
// client or for another call, or by another replica.
var errUnknownState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState is not one this gateway holds for this call (forged, used already, expired, or issued by another gateway replica): call the tool again without requestState"}

// answer is a client's answer to one question, or why there is none.
type answer struct {
	raw json.RawMessage
	err error
}

// question is one backend request waiting for the client's answer.
type question struct {
	key    string // the backend's own key for it (a round's), "" for none
	method string
	params json.RawMessage
	answer chan answer // buffer 1: the answer is never waited for
	gone   atomic.Bool // its asker stopped waiting: no longer asked
}

// callOwner is who may resume a parked call: the same caller and call.
type callOwner struct {
	caller
	tool string   // the served name called
	args [32]byte // of the arguments, canonical
}

// caller is who called: the same session (stateful serving), and the
// same identity, or the same credential when the gateway has none. Bound
// to the identity, a call survives its client's token refresh between
// the input-required answer and the retry.
type caller struct {
	session *mcp.ServerSession // nil in stateless mode: each request has its own
	who     [32]byte           // of the identity, else of the Authorization header
}

// place is whose share of MaxParkedPerClient a parked call holds.
type place struct {
	session *mcp.ServerSession
	key     string
}

// placeFor chooses whose share of MaxParkedPerClient a call takes. An
// identity the gateway authenticated (Options.Authenticate) is one
// client however many sessions or tokens it uses. Without one, nothing
// a client sends tells clients apart: a session costs an initialize and
// a credential is free text, so an attacker varying either would take
// every place. A stateful session is still the key there (sessions are
// capped by MaxSessions, and opening many already evicts others), but a
// stateless request's only key the client cannot choose per request is
// its address: clients behind one address (loopback, a proxy) share a
// share, and an attacker gets no more than any one of them.
func placeFor(identity, address string, session *mcp.ServerSession, identities bool) place {
	switch {
	case identities && identity != "":
		return place{key: "identity " + identity}
	case session != nil:
		return place{session: session}
	}
	return place{key: "address " + address}
}

// parkedCall is one call of a client asked through input-required
// results. Its goroutine is owned by parkedCalls.
type parkedCall struct {
	owner  callOwner
	place  place
	notes  relay           // where its progress and log messages go now
	ctx    context.Context // the call's, outliving the request that started it
	cancel context.CancelCauseFunc
	asks   chan []*question // the backend's questions, a round at once; never full (see ask)
	open   atomic.Int32     // questions asked and not yet answered or refused
	done   chan struct{}    // closed when the call returned, res and err set
	// promoted takes the gateway's task the call became, when its backend
	// made one (taskrelay.go): it answers the request waiting on the call.
	promoted chan json.RawMessage
	res      result
	err      error

	mu      sync.Mutex
	pending map[string]*question // put to the client, unanswered; guarded by mu
	seq     int                  // the last question's number; guarded by mu
}

// parkedCalls holds the calls waiting for their client to call again, by
// the requestState the client was given. The zero value is ready to use.
type parkedCalls struct {
	mu      sync.Mutex
	byState map[string]*parkedCall      // guarded by mu
	expiry  map[*parkedCall]*time.Timer // guarded by mu
	of      map[place]int               // parked calls by place; guarded by mu
	closed  bool                        // guarded by mu
	calls   pending                     // the parkable calls' goroutines
	// tag names this gateway in the states it gives (replicaTag), so
	// another replica knows whose call a state names (replicas.go).
	tag string
}

// asksByResult reports whether the client of session is asked through
// input-required results (protocol 2026-07-28 or later) and offers
// something a backend may ask (elicitation, sampling or roots): its calls
// run parkable. The version is the negotiated one: a client that asked
// initialize for 2026-07-28 was answered, and is served, 2025-11-25
// (sdkwire.NegotiateInitialize).
func asksByResult(session *mcp.ServerSession) bool {
	if session == nil {
		return false
	}
	p := session.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28" && offersAsking(p.Capabilities)
}

// offersAsking reports whether caps offers something a backend may ask.
func offersAsking(caps *mcp.ClientCapabilities) bool {
	return caps != nil && (caps.Elicitation != nil || caps.Sampling != nil || offersRoots(caps))
}

// asksByResult is asksByResult of the call's client: for a 2026-07-28
// call taken beneath its POST's session, whose SDK session has not read
// the request's _meta yet, from the request's own capabilities.
func (r callRequest) asksByResult() bool {
	if r.peer != nil {
		return offersAsking(r.peer.caps)
	}
	return asksByResult(r.session)
}

// capabilities is what the call's client offers: the request's for a
// taken 2026-07-28 call (see asksByResult), its session's otherwise.
func (r callRequest) capabilities() *mcp.ClientCapabilities {
	if r.peer != nil {
		return r.peer.caps
	}
	return clientCapabilities(r.session)
}

// offersRoots reports whether caps declares roots.
func offersRoots(caps *mcp.ClientCapabilities) bool {
	return caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged)
}

// ownerOf is who made the call req, whose handling ctx is.
func (g *Gateway) ownerOf(ctx context.Context, req callRequest) callOwner {
	who := sha256.Sum256([]byte("credential " + req.header.Get("Authorization")))
	if id := identityIn(ctx); g.opts.Authenticate != nil && id != "" {
		who = sha256.Sum256([]byte("identity " + id))
	}
	o := callOwner{
		caller: caller{who: who},
		tool:   req.params.Name,
		args:   sha256.Sum256(canonical(req.params.Arguments)),
	}
	if !g.statelessIn(ctx) {
		o.session = req.session
	}
	return o
}

// placeOf is whose share of MaxParkedPerClient the call req takes.
func (g *Gateway) placeOf(ctx context.Context, req callRequest) place {
	session := req.session
	if g.statelessIn(ctx) {
		session = nil
	}
	return placeFor(identityIn(ctx), addressIn(ctx), session, g.opts.Authenticate != nil)
}

// canonical is args re-encoded (object keys sorted), so the same
// arguments written in another order are the same call; args itself when
// it is not JSON.
func canonical(args json.RawMessage) []byte {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args // unreachable: decoded JSON encodes
	}
	return out
}

// runParkable runs a call whose client is asked through input-required
// results (asksByResult): on a goroutine of its own, so that a question
// answers this request while the call waits for the next one. The call
// keeps its admission a while it is parked, and ends it when it returns.
func (g *Gateway) runParkable(ctx context.Context, a *admission) (result, error) {
	req := a.req
	caps := req.capabilities()
	res, ran, err := g.park(ctx, req, func(callCtx context.Context, pc *parkedCall) (result, error) {
		defer a.release()
		callCtx = tool.WithInputs(callCtx, pc.inputs(caps))
		res, err := g.run(callCtx, a.name, req.session, callHow{ask: pc.asker(caps), parked: true, notes: &pc.notes}, req.params)
		if unrecorded := a.end(res, err); unrecorded != nil { // before its result can reach the client
			return result{}, unrecorded
		}
		return res, err
	})
	if !ran {
		a.release()
		res = errorResult("tool call refused: " + errClosing.Error())
		_ = a.end(res, nil) // refused either way
		return res, nil
	}
	return res, err
}

// park runs body, the backend request of req, parkable (see
// runParkable), and waits for its first round; ran is false when the
// gateway closed first and body never ran.
func (g *Gateway) park(ctx context.Context, req callRequest, body func(context.Context, *parkedCall) (result, error)) (res result, ran bool, err error) {
	callCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	pc := &parkedCall{owner: g.ownerOf(ctx, req), place: g.placeOf(ctx, req), ctx: callCtx, cancel: cancel,
		asks: make(chan []*question, MaxAsksPerSession), done: make(chan struct{}), promoted: make(chan json.RawMessage, 1), pending: map[string]*question{}}
	if !g.parked.start() {
		cancel(errClosing)
		return result{}, false, nil
	}
	// Waited on before it starts: its first progress may come at once.
	defer g.waitOn(ctx, req, pc)()
	go func() {
		defer g.parked.calls.done()
		defer cancel(nil)
		if s := pc.owner.session; s != nil {
			defer g.cancelAtEnd(s, pc)()
		}
		pc.res, pc.err = body(callCtx, pc)
		close(pc.done)
	}()
	res, err = g.round(ctx, req, pc)
	return res, true, err
}

// cancelAtEnd cancels pc when session ends (no one is left to answer its
// questions) and returns the function that stops watching and waits.
func (g *Gateway) cancelAtEnd(session *mcp.ServerSession, pc *parkedCall) func() {
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-g.ends.of(session):
			pc.cancel(errSessionClosed)
		case <-stop:
		}
	}()
	return func() {
		close(stop)
		<-stopped
	}
}

// resume brings the answers of req, a call again with a requestState, to
// the parked call that state names, and waits for what it says next.
func (g *Gateway) resume(ctx context.Context, req callRequest) (result, error) {
	pc := g.parked.take(req.params.RequestState, g.ownerOf(ctx, req))
	if pc == nil {
		g.log.Info("a call's requestState refused", "tool", req.params.Name, "err", errUnknownState.Message)
		return result{}, errUnknownState
	}
	defer g.waitOn(ctx, req, pc)()
	pc.answered(req.params.InputResponses) // the call may go on at once
	return g.round(ctx, req, pc)
}

// waitOn makes req, handled under ctx, the request pc's notifications go
// to, until the function it returns is called.
func (g *Gateway) waitOn(ctx context.Context, req callRequest, pc *parkedCall) func() {
	return pc.notes.waitedOnBy(ctx, notifierOf(req), req.params.GetProgressToken())
}

// round waits for what the call says next: its result, or questions,
// which park it and answer the request req input-required (whose caller
// made req the one the call's notifications go to: waitOn). Meanwhile the
// request is tracked as a call in flight, so the end of its session or
// stream, or Close, cancels the call as it would any other; a client that
// leaves first cancels it too: no one is left to answer it.
func (g *Gateway) round(ctx context.Context, req callRequest, pc *parkedCall) (result, error) {
	waiting := &inflight{session: req.session, cancel: pc.cancel, stream: req.header.Get(streamHeader)}
	if err := g.track(waiting); err != nil { // untested: a call arriving while its session or the gateway closes
		pc.cancel(err)
	} else {
		defer g.untrack(waiting)
	}
	if g.streamGone(waiting.stream) {
		pc.cancel(errStreamGone)
	}
	for {
		select {
		case <-pc.done: // its questions, if any are left, are moot
			return pc.outcome()
		default:
		}
		if pc.unanswered() {
			if state, ok := g.parked.hold(pc, g.questionWait(), g.expired); ok {
				g.log.Debug("call parked for its client's answers", "tool", pc.owner.tool)
				return result{questions: pc.requests(), state: state}, nil
			}
			g.log.Warn("a backend's questions refused: too many calls wait for their clients' answers", "limit", MaxParkedCalls, "perClient", MaxParkedPerClient)
			pc.refuseAll()
		}
		select {
		case <-pc.done:
			return pc.outcome()
		case raw := <-pc.promoted:
			return result{wire: raw}, nil
		case qs := <-pc.asks:
			pc.put(qs)
		case <-ctx.Done():
			pc.cancel(errClientLeft)
			return result{}, ctx.Err()
		}
	}
}

// outcome is what a call that returned says last: the task it became
// (promoted), which the client follows to the result, else the result.
func (pc *parkedCall) outcome() (result, error) {
	select {
	case raw := <-pc.promoted:
		return result{wire: raw}, nil
	default:
		return pc.res, pc.err
	}
}

// expired ends a parked call whose client did not come back in time.
func (g *Gateway) expired(pc *parkedCall) {
	g.log.Info("a parked call cancelled: its client did not answer", "tool", pc.owner.tool)
	pc.cancel(errQuestionExpired)
}

// asker is the call's tool.AskFunc: a backend's question is put to the
// client with the next input-required result, when the client's
// capabilities allow it (see refuseAsk).
func (pc *parkedCall) asker(caps *mcp.ClientCapabilities) tool.AskFunc {
	return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		if r := refuseAsk(caps, a); r != nil {
			return r.answer, r.err
		}
		if a.Method == tool.AskRoots && !offersRoots(caps) {
			return nil, errors.New("the gateway's client offers no roots")
		}
		return pc.ask(ctx, a)
	}
}

// ask queues a question for the client and waits for its answer, at most
// MaxAsksPerSession at once.
func (pc *parkedCall) ask(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
	if pc.open.Add(1) > MaxAsksPerSession {
		pc.open.Add(-1)
		return tooManyAsks(a.Method)
	}
	defer pc.open.Add(-1)
	q := &question{method: a.Method, params: a.Params, answer: make(chan answer, 1)}
	select {
	case pc.asks <- []*question{q}:
	default: // full of questions whose askers stopped waiting
		return tooManyAsks(a.Method)
	}
	return pc.await(ctx, q)
}

// await waits for q's answer, or for the asker or the call to give up.
func (pc *parkedCall) await(ctx context.Context, q *question) (json.RawMessage, error) {
	select {
	case ans := <-q.answer:
		return ans.raw, ans.err
	case <-ctx.Done():
		q.gone.Store(true)
		return nil, context.Cause(ctx)
	case <-pc.ctx.Done():
		q.gone.Store(true)
		return nil, context.Cause(pc.ctx)
	}
}

// tooManyAsks refuses a question past a bound: an elicitation is
// declined, others fail.
func tooManyAsks(method string) (json.RawMessage, error) {
	if method == tool.AskElicit {
		return declined, nil
	}
	return nil, fmt.Errorf("too many requests wait for this client's answer (the gateway's limit is %d)", MaxAsksPerSession)
}

// put adds qs, and every question queued behind them, to those the
// client is asked: each under the backend's own key when it has one that
// is free, else under a number of the gateway's.
func (pc *parkedCall) put(qs []*question) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for {
		for _, q := range qs {
			pc.pending[pc.keyFor(q)] = q
		}
		select {
		case qs = <-pc.asks:
		default:
			return
		}
	}
}

// keyFor is the key q is asked under: the backend's own when it is free,
// else the next free number of the gateway's; pc.mu is held.
func (pc *parkedCall) keyFor(q *question) string {
	if _, taken := pc.pending[q.key]; q.key != "" && !taken {
		return q.key
	}
	for {
		pc.seq++
		key := "q" + strconv.Itoa(pc.seq)
		if _, taken := pc.pending[key]; !taken {
			return key
		}
	}
}

// unanswered reports whether questions wait for the client, taking in
// those queued and dropping those no one waits for any more.
func (pc *parkedCall) unanswered() bool {
	select {
	case qs := <-pc.asks:
		pc.put(qs)
	default:
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for key, q := range pc.pending {
		if q.gone.Load() {
			delete(pc.pending, key)
		}
	}
	return len(pc.pending) > 0
}

// inputRequest is one question as an input-required result carries it.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// requests is the inputRequests object of the questions waiting.
func (pc *parkedCall) requests() json.RawMessage {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	out := make(map[string]inputRequest, len(pc.pending))
	for key, q := range pc.pending {
		out[key] = inputRequest{Method: q.method, Params: q.params}
	}
	return mustJSON(out)
}

// answered hands each waiting question its answer from responses; a
// question left unanswered is asked again.
func (pc *parkedCall) answered(responses mcp.InputResponseMap) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for key, q := range pc.pending {
		resp, ok := responses[key]
		if !ok || resp == nil {
			continue
		}
		raw, err := json.Marshal(resp)
		q.answer <- answer{raw: raw, err: err}
		delete(pc.pending, key)
	}
}

// refuseAll answers every waiting question with a refusal.
func (pc *parkedCall) refuseAll() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	for key, q := range pc.pending {
		raw, err := tooManyAsks(q.method)
		if err != nil {
			err = errors.New("the gateway holds too many calls waiting for their clients' answers")
		}
		q.answer <- answer{raw: raw, err: err}
		delete(pc.pending, key)
	}
}

// start counts a parkable call's goroutine, unless the gateway closed.
func (p *parkedCalls) start() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.calls.add()
	return true
}

// hold parks pc under a new requestState, which it returns, until the
// client brings it back (take) or wait passes (then expire runs); false
// when MaxParkedCalls are parked already.
func (p *parkedCalls) hold(pc *parkedCall, wait time.Duration, expire func(*parkedCall)) (string, bool) {
	state := newState(p.tag)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.byState) >= MaxParkedCalls || p.of[pc.place] >= MaxParkedPerClient {
		return "", false
	}
	if p.byState == nil {
		p.byState, p.expiry, p.of = map[string]*parkedCall{}, map[*parkedCall]*time.Timer{}, map[place]int{}
	}
	p.byState[state] = pc
	p.of[pc.place]++
	p.expiry[pc] = time.AfterFunc(wait, func() {
		if p.drop(state, pc) {
			expire(pc)
		}
	})
	return state, true
}

// drop forgets pc, parked under state, and reports whether it was.
func (p *parkedCalls) drop(state string, pc *parkedCall) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byState[state] != pc {
		return false
	}
	p.unpark(state, pc)
	return true
}

// unpark forgets pc, parked under state; p.mu is held.
func (p *parkedCalls) unpark(state string, pc *parkedCall) {
	delete(p.byState, state)
	p.expiry[pc].Stop()
	delete(p.expiry, pc)
	if p.of[pc.place]--; p.of[pc.place] <= 0 {
		delete(p.of, pc.place)
	}
}

// take returns, and unparks, the call parked under state for owner; nil
// when there is none (the state is then still good for its own owner).
// A state is taken once: a replay finds nothing.
func (p *parkedCalls) take(state string, owner callOwner) *parkedCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	pc := p.byState[state]
	if pc == nil || pc.owner != owner {
		return nil
	}
	p.unpark(state, pc)
	return pc
}

// forget unparks the calls of session, which ended: no one can bring
// their requestStates back, and parked until QuestionWait passed they
// held their places, and the session, for nothing.
func (p *parkedCalls) forget(session *mcp.ServerSession) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for state, pc := range p.byState {
		if pc.owner.session == session {
			p.unpark(state, pc)
		}
	}
}

// close cancels the parked calls and refuses new ones; those not parked
// are cancelled as calls in flight (Close). Then wait waits for them.
func (p *parkedCalls) close() {
	p.mu.Lock()
	p.closed = true
	parked := p.byState
	for _, timer := range p.expiry {
		timer.Stop()
	}
	p.byState, p.expiry, p.of = nil, nil, nil
	p.mu.Unlock()
	for _, pc := range parked {
		pc.cancel(errClosing)
	}
}

// wait waits until every parkable call has returned or deadline passes,
// and says how many are left.
func (p *parkedCalls) wait(deadline time.Time) error {
	if left := p.calls.wait(deadline); left > 0 {
		return fmt.Errorf("gateway: %d call(s) still running when the shutdown timeout passed: a tool ignores cancellation", left)
	}
	return nil
}

// newState returns a requestState of the gateway tagged tag: 192 random
// bits, unguessable, so a client can name only a state it was given.
func newState(tag string) string {
	var b [24]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return tagged(tag) + base64.RawURLEncoding.EncodeToString(b[:])
}

// tagged is how what a replica tagged tag gives its clients to name
// again (a requestState, a task id) starts: stateTag reads the tag back,
// and the replicas route a request naming it to that replica.
func tagged(tag string) string { return tagPrefix + tag + "." }

// tagPrefix starts what tagged makes.
const tagPrefix = "mcpbridge."
