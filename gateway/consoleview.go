package gateway

// ParkedCall is a call parked now for its client's answers
// (input-required results, protocol 2026-07-28), as ParkedCalls reports
// it for the console.
type ParkedCall struct {
	// Value is the value the call's context holds for ParkedCalls' key:
	// the call's context descends from the one the Gate's Enter returned
	// for it, so a Gate that put a value there finds which of its calls
	// this is.
	Value any
	// Tool is the served name called.
	Tool string
	// Questions counts the questions put to the client and not yet
	// answered.
	Questions int
}

// ParkedCalls lists the calls parked now for their clients' answers, in
// no particular order, each with its context's value for key. It only
// reads: safe for concurrent use, and quick (at most MaxParkedCalls).
func (g *Gateway) ParkedCalls(key any) []ParkedCall {
	p := &g.parked
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ParkedCall, 0, len(p.byState))
	for _, pc := range p.byState {
		out = append(out, ParkedCall{Value: pc.ctx.Value(key), Tool: pc.owner.tool, Questions: int(pc.open.Load())})
	}
	return out
}
