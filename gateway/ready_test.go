package gateway

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Before the backends are ready the gateway answers initialize and ping,
// and holds tools/list until they are: the first list already has the
// tools registered meanwhile, without the client waiting for list_changed.
func TestRequestsWaitForReady(t *testing.T) {
	reg := tool.NewRegistry()
	ready := make(chan struct{})
	g := newGateway(t, reg, Options{Ready: ready})
	if h := g.Health(); h.Ready || h.OK {
		t.Errorf("health before ready: %+v", h)
	}
	c := connectInMemory(t, g) // initialize is answered at once
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.session.Ping(ctx, nil); err != nil {
		t.Fatalf("ping before ready: %v", err)
	}

	listed := make(chan []string, 1)
	go func() {
		var names []string
		for tl, err := range c.session.Tools(ctx, nil) {
			if err != nil {
				t.Errorf("listing tools: %v", err)
				break
			}
			names = append(names, tl.Name)
		}
		listed <- names
	}()
	select {
	case names := <-listed:
		t.Fatalf("tools/list answered before ready: %v", names)
	case <-time.After(50 * time.Millisecond): // a bound on a negative; the positive below needs no timing
	}
	if _, err := reg.Register(goTool("late", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	close(ready)
	if diff := cmp.Diff([]string{"late"}, waitSignal(t, listed, "the tools/list answer")); diff != "" {
		t.Errorf("first tools/list (-want +got):\n%s", diff)
	}
	if got := texts(c.call(t, "late", `{}`)); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("call after ready: %v", got)
	}
	if h := g.Health(); !h.Ready || !h.OK {
		t.Errorf("health after ready: %+v", h)
	}
}

// A ready timeout bounds the wait: requests are answered with what is
// registered by then, and health says ready.
func TestReadyTimeout(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("early", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	never := make(chan struct{})
	g := newGateway(t, reg, Options{Ready: never, ReadyTimeout: 100 * time.Millisecond})
	c := connectInMemory(t, g)
	if diff := cmp.Diff([]string{"early"}, c.names(t)); diff != "" {
		t.Errorf("tools/list after the ready timeout (-want +got):\n%s", diff)
	}
	if h := g.Health(); !h.Ready {
		t.Errorf("health after the ready timeout: %+v", h)
	}
}
