package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// Gate is consulted by the gateway's one call path (serveCall) on every
// tools/call of a tool it serves, once the call holds its session slot
// and before the tool runs: who is calling, may they, and what came of
// it. Identity, policy, audit and rate limits implement it outside the
// gateway (Options.Gate), so that the gateway stays free of them.
//
// It is entered once per logical call (admission.go): a call as a task
// before the task exists (a refused call gets no task), and a call parked
// for its client's answers (input-required results) not again for the
// retries that bring them. A prompts/get or resources/read
// (Call.Method) is entered the same way. Its end comes when the call
// returns: a task's when the task ends, a parked call's when it ends,
// not when it parks.
//
// Enter runs on the call's goroutine, so it must be safe for concurrent
// use; it must not call the Gateway. It returns the context the call runs
// in (ctx, or one derived from it that keeps its cancellation; a task
// keeps its values, not its end) and a function the gateway calls exactly
// once when the call ends, which returns an error when the end could not
// be recorded (an audit line not written, and the Gate fails closed): a
// call answered at once is then answered with that error instead of its
// result; or an error that refuses the call: ErrHidden answers it as an
// unknown tool (prompt, resource), a *jsonrpc.Error is the response as
// is, any other error an isError result saying the call was refused and
// why.
//
// A Gate may also offer more (Screen, QuestionWaiter, SharedSessions,
// SharedTasks). One that wraps another Gate (a tracker in front of the
// policy) implements Unwrap, so that what the one it wraps offers is
// found through it (gateAs): a wrapper without it would turn the
// policy's screening of lists off.
type Gate interface {
	Enter(ctx context.Context, call Call) (context.Context, func(Outcome) error, error)
}

// gateAs returns what g, or the Gate it wraps (Unwrap, at any depth),
// offers as T.
func gateAs[T any](g Gate) (T, bool) {
	for g != nil {
		if t, ok := g.(T); ok {
			return t, true
		}
		w, ok := g.(interface{ Unwrap() Gate })
		if !ok {
			break
		}
		g = w.Unwrap()
	}
	var zero T
	return zero, false
}

// ErrHidden, as (or wrapped in) the error of a Gate's Enter, refuses a
// tools/call of a tool the caller may not see: the call is answered as
// one of a tool that does not exist, on every path (plain, as a task,
// under the tasks extension), so that no caller learns what is hidden
// from it; a prompts/get or resources/read, as one of a prompt or
// resource that does not exist. Whether a refusal says "not allowed" or hides the tool is the
// Gate's choice; the Gate still records the refusal.
var ErrHidden = errors.New("gateway: the tool is hidden from its caller")

// Call is one tools/call as a Gate sees it.
type Call struct {
	// Method is "" for a tools/call; MethodGetPrompt or MethodReadResource
	// for a Gate that is also a Screen.
	Method string
	// Tool is the name the client called (the served name); Public is the
	// registry tool it runs. For a prompt both are its public name; for a
	// resource, its URI.
	Tool, Public string
	// Server is a resource's server; "" otherwise.
	Server string
	// Session is the client session's ID, "" for a session without one
	// (stdio, in-memory); Client the name the client gave in initialize.
	Session, Client string
	// Header holds the HTTP request's headers; nil off HTTP.
	Header http.Header
	// Meta is the request's _meta; Arguments its arguments as received.
	// Neither may be modified.
	Meta      map[string]any
	Arguments json.RawMessage
	// Parent, for a call a served tool makes for its caller (code mode's
	// run_code running a program: Gateway.CallFor), is the call of that
	// tool as the Gate saw it; nil for a client's call. The Gate's
	// context for such a call derives from the one its Enter returned for
	// Parent.
	Parent *Call
}

// Resumer is implemented by a Gate that records the end of a call
// another replica began and could not end: one this gateway follows for
// it (a task taken over when its replica stopped), or one it ends failed
// as its replica was lost (Outcome.Lost). The call was admitted there, so
// Resume decides and limits nothing; the function it returns records how
// the call ended, for identity, the caller that began it.
type Resumer interface {
	Resume(c Call, identity string) func(Outcome)
}

// Outcome is how an admitted call ended.
type Outcome struct {
	// IsError reports an isError result; Failed a JSON-RPC error (the
	// tool was gone by the time it ran).
	IsError, Failed bool
	// HandedOver reports a task's call this gateway stopped following as
	// it stopped, its backend's task going on: another replica follows it
	// to its end.
	HandedOver bool
	// Lost reports, with Failed, a task's call whose replica stopped
	// (killed, or cut off from the store) before it ended, ended failed by
	// the replica that found its lease lapsed: the replica that ran it
	// wrote no line of its own.
	Lost bool
	// EndedElsewhere reports a task's call whose task another replica
	// ended as lost, or took over, while this one stalled past its lease:
	// that replica wrote the call's line (Resumer), and the Gate writes
	// none of its own; the rest says how the call ended here.
	EndedElsewhere bool
}

// openGate lets every call through: the default Gate.
type openGate struct{}

func (openGate) Enter(ctx context.Context, _ Call) (context.Context, func(Outcome) error, error) {
	return ctx, func(Outcome) error { return nil }, nil
}

var _ Gate = openGate{}
