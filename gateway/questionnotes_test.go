//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging (SEP-2577) but keeps it working for at least a year; the bridge carries it.

package gateway

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a notifier that records what it is sent.
type recorder struct{ sent []string }

func (r *recorder) NotifyProgress(_ context.Context, p *mcp.ProgressNotificationParams) error {
	r.sent = append(r.sent, fmt.Sprintf("progress %v %v", p.ProgressToken, p.Progress))
	return nil
}

func (r *recorder) Log(_ context.Context, m *mcp.LoggingMessageParams) error {
	r.sent = append(r.sent, fmt.Sprintf("log %v", m.Data))
	return nil
}

// A parked call's notifications go to the request waiting on it, under
// its progress token (none: progress dropped), and are dropped, not
// queued, while no request waits, however many the backend sends.
func TestRelayFollowsTheWaitingRequest(t *testing.T) {
	var r relay
	send := func(n int) {
		for i := range n {
			_ = r.NotifyProgress(t.Context(), &mcp.ProgressNotificationParams{ProgressToken: "backend's", Progress: float64(i)})
			_ = r.Log(t.Context(), &mcp.LoggingMessageParams{Data: i})
		}
	}
	send(10_000) // before any request waits

	var first, second recorder
	end := r.waitedOnBy(t.Context(), &first, nil)
	send(1)
	end()
	send(10_000) // between rounds
	endSecond := r.waitedOnBy(t.Context(), &second, "second")
	end() // the first request's late end leaves the second in place
	send(1)
	endSecond()
	send(1)

	if want := []string{"log 0"}; !slices.Equal(first.sent, want) {
		t.Errorf("the first request (no progress token) was sent %v, want %v", first.sent, want)
	}
	if want := []string{"progress second 0", "log 0"}; !slices.Equal(second.sent, want) {
		t.Errorf("the second request was sent %v, want %v", second.sent, want)
	}
}
