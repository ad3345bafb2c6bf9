//lint:file-ignore SA1019 MCP 2026-07-28 deprecates sampling and roots (SEP-2577) but keeps them working for at least a year; servers still ask for them, and the bridge carries them.

package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A 2026-07-28 backend asks a round of questions at once, each under a
// key of its own, in an input-required result. The parked call puts the
// whole round to its client in one input-required result, under the
// backend's keys, and brings the client's answers back under them
// (tool.InputsFunc); the backend's requestState stays with the backend
// call that waits for them (mcpclient), and the client carries the
// gateway's own, bound to it (callOwner).

// noRoots is the answer to roots/list for a client that offers none: the
// entry's roots of roots: client, which are none.
var noRoots = json.RawMessage(`{"roots":[]}`)

// inputs is the call's tool.InputsFunc, for a client with caps: what the
// client cannot take is answered as a single question would be
// (refuseAsk), the rest is put to it at once.
func (pc *parkedCall) inputs(caps *mcp.ClientCapabilities) tool.InputsFunc {
	return func(ctx context.Context, round map[string]tool.Ask) (map[string]json.RawMessage, error) {
		out := make(map[string]json.RawMessage, len(round))
		var asked []*question
		for key, a := range round {
			if r := refuseAsk(caps, a); r != nil {
				if r.err != nil {
					return nil, r.err
				}
				out[key] = r.answer
				continue
			}
			if a.Method == tool.AskRoots && !offersRoots(caps) {
				out[key] = noRoots
				continue
			}
			asked = append(asked, &question{key: key, method: a.Method, params: a.Params, answer: make(chan answer, 1)})
		}
		return out, pc.askAll(ctx, asked, out)
	}
}

// askAll queues the questions qs for the client at once and waits for
// every answer, which it puts in out under each question's key; at most
// MaxAsksPerSession wait at once.
func (pc *parkedCall) askAll(ctx context.Context, qs []*question, out map[string]json.RawMessage) error {
	if len(qs) == 0 {
		return nil
	}
	n := int32(len(qs))
	defer pc.open.Add(-n)
	if pc.open.Add(n) > MaxAsksPerSession {
		return errTooManyQuestions
	}
	select {
	case pc.asks <- qs:
	default: // full of questions whose askers stopped waiting
		return errTooManyQuestions
	}
	var errs []error
	for _, q := range qs {
		raw, err := pc.await(ctx, q)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[q.key] = raw
	}
	for _, q := range qs {
		q.gone.Store(len(errs) > 0) // no one waits for the rest of a failed round
	}
	return errors.Join(errs...)
}

// errTooManyQuestions refuses a round past MaxAsksPerSession.
var errTooManyQuestions = errors.New("too many requests wait for this client's answer")
