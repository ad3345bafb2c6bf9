package gateway

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// subscribedBackend is a go-sdk backend offering doc://a and doc://b that
// records the subscribe and unsubscribe requests it gets.
type subscribedBackend struct {
	srv *mcp.Server
	mu  sync.Mutex
	got []string
}

func newSubscribedBackend() *subscribedBackend {
	b := &subscribedBackend{}
	b.srv = mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			b.add("subscribe " + req.Params.URI)
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error {
			b.add("unsubscribe " + req.Params.URI)
			return nil
		},
	})
	for _, uri := range []string{"doc://a", "doc://b"} {
		b.srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, docReader)
	}
	return b
}

func (b *subscribedBackend) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, s)
}

func (b *subscribedBackend) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// A backend's resource updates reach the clients that subscribed through
// the gateway's queue, a burst of one URI at least once; Close cancels the
// gateway's subscriptions, so the backend is told to stop, and a subscribe
// after Close is refused without leaving one behind.
func TestResourceSubscriptionsEndWithTheGateway(t *testing.T) {
	reg := tool.NewRegistry()
	b := newSubscribedBackend()
	// resources/subscribe, as protocols before 2026-07-28 have it.
	startMemBackend(t, reg, mcpclient.Config{ServerName: "docs", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25"}, b.srv)
	g := New(reg, Options{})
	updated := make(chan string, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	cs, s := connectClient(t, g, client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	for _, uri := range []string{"doc://a", "doc://b"} {
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	for range 3 {
		b.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: "doc://a"})
	}
	if got := waitSignal(t, updated, "the update of doc://a"); got != "doc://a" {
		t.Errorf("updated %s, want doc://a", got)
	}

	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.wait(t); err != nil {
		t.Errorf("ServeTransport: %v", err)
	}
	want := []string{"subscribe doc://a", "subscribe doc://b", "unsubscribe doc://a", "unsubscribe doc://b"}
	got := b.calls()
	if len(got) == 4 && got[2] > got[3] {
		got[2], got[3] = got[3], got[2] // the unsubscribes go concurrently
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the backend's subscription requests (-want +got):\n%s", diff)
	}
	if err := g.subscribe(context.Background(), &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: "doc://a"}}); err == nil {
		t.Error("a subscribe after Close succeeded")
	}
	if got := b.calls(); len(got) != 6 || got[5] != "unsubscribe doc://a" {
		t.Errorf("a subscribe after Close left the backend with %v", got)
	}
}

// A burst of updates of one URI is queued once, in order of first arrival,
// so the queue holds at most the subscribed URIs.
func TestUpdateQueueCoalesces(t *testing.T) {
	q := newUpdateQueue()
	for _, uri := range []string{"a", "b", "a", "a", "b", "c"} {
		q.add(uri)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, q.drain()); diff != "" {
		t.Errorf("drained (-want +got):\n%s", diff)
	}
	if got := q.drain(); len(got) != 0 {
		t.Errorf("drained again: %v", got)
	}
	q.add("a")
	if diff := cmp.Diff([]string{"a"}, q.drain()); diff != "" {
		t.Errorf("after a drain (-want +got):\n%s", diff)
	}
}
