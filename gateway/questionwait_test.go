package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// waitGate lets every call in and says how long a parked call waits
// (QuestionWaiter), as serve's Keeper does with the gateway entry's
// questionWaitMs.
type waitGate struct{ wait time.Duration }

func (w waitGate) Enter(ctx context.Context, _ Call) (context.Context, func(Outcome) error, error) {
	return ctx, func(Outcome) error { return nil }, nil
}

func (w waitGate) QuestionWait() time.Duration { return w.wait }

var _ QuestionWaiter = waitGate{}

// How long a parked call waits: the Gate's say first (the gateway
// entry's questionWaitMs), then Options.QuestionWait, else a short
// default: an abandoned round is released in seconds, not minutes.
func TestQuestionWaitSetting(t *testing.T) {
	for _, c := range []struct {
		name string
		gate Gate
		opt  time.Duration
		want time.Duration
	}{
		{"nothing set", nil, 0, 30 * time.Second},
		{"options", nil, time.Minute, time.Minute},
		{"a gate that says nothing", waitGate{}, time.Minute, time.Minute},
		{"the gate's over the options", waitGate{2 * time.Second}, time.Minute, 2 * time.Second},
		{"a gate that is no QuestionWaiter", openGate{}, 0, 30 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGateway(t, tool.NewRegistry(), Options{Gate: c.gate, QuestionWait: c.opt})
			if got := g.questionWait(); got != c.want {
				t.Errorf("questionWait() = %v, want %v", got, c.want)
			}
		})
	}
	if DefaultQuestionWait > 30*time.Second {
		t.Errorf("DefaultQuestionWait is %v: an abandoned round holds its backend call that long", DefaultQuestionWait)
	}
}

// A call abandoned in input-required is released when the Gate's wait
// passes, although Options.QuestionWait is an hour: the backend's
// question ends (its backend call is freed), the call is no longer
// parked, and its requestState is refused.
func TestGateQuestionWaitReleasesCall(t *testing.T) {
	reg := tool.NewRegistry()
	cancelled := startConfirmBackend(t, reg, "2025-11-25")
	g := newGateway(t, reg, Options{Stateless: true, Gate: waitGate{time.Millisecond}, QuestionWait: time.Hour})
	alice := manualClient(t, serveHTTP(t, g, Options{Stateless: true}), "")
	key, state := askedFor(t, alice, "deploy")
	waitSignal(t, cancelled, "the backend's question ended")
	waitFor(t, "no call parked", func() bool { return len(g.ParkedCalls(nil)) == 0 })
	if _, err := answerWith(alice, "deploy", key, state); err == nil || !strings.Contains(err.Error(), "requestState is not one") {
		t.Errorf("an answer after the Gate's wait: got %v, want the requestState refused", err)
	}
}
