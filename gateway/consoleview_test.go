package gateway

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// markKey is the key of markingGate's value.
type markKey struct{}

// markingGate admits every call and marks its context with the tool's
// name, as the console's Tracker marks the calls it admitted.
type markingGate struct{}

func (markingGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	return context.WithValue(ctx, markKey{}, "marked "+c.Public), func(Outcome) error { return nil }, nil
}

// ParkedCalls lists a call parked for its client's answers with its
// question count and the value its Gate put in its context; none once
// the client has answered.
func TestParkedCallsView(t *testing.T) {
	reg := tool.NewRegistry()
	startConfirmBackend(t, reg, "2025-11-25")
	opts := Options{Stateless: true, Gate: markingGate{}}
	g := newGateway(t, reg, opts)
	alice := manualClient(t, serveHTTP(t, g, opts), "")
	if got := g.ParkedCalls(markKey{}); len(got) != 0 {
		t.Fatalf("before any call: %+v, want none", got)
	}
	key, state := askedFor(t, alice, "deploy")
	want := []ParkedCall{{Value: "marked mcp__ask__confirm", Tool: "mcp__ask__confirm", Questions: 1}}
	if diff := cmp.Diff(want, g.ParkedCalls(markKey{})); diff != "" {
		t.Errorf("parked (-want +got):\n%s", diff)
	}
	if _, err := answerWith(alice, "deploy", key, state); err != nil {
		t.Fatal(err)
	}
	if got := g.ParkedCalls(markKey{}); len(got) != 0 {
		t.Errorf("after the answer: %+v, want none parked", got)
	}
}
