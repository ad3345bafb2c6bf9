package sdkwire

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseEndpoint serves newServer over the legacy HTTP+SSE transport.
func sseEndpoint(t *testing.T) string {
	srv := newServer(nil)
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// connectSSE connects a client through tr with a context cancelled right
// after Connect returns, as a connection attempt's is.
func connectSSE(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, tr, nil)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// waitEnded reports whether cs's session ends within a generous bound.
func waitEnded(cs *mcp.ClientSession) bool {
	ended := make(chan struct{})
	go func() { cs.Wait(); close(ended) }()
	select {
	case <-ended:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// Assumption 19.
func TestContractSSEStreamOnConnectContext(t *testing.T) {
	url := sseEndpoint(t)
	cs := connectSSE(t, &mcp.SSEClientTransport{Endpoint: url})
	if !waitEnded(cs) {
		t.Fatal("the session outlived its Connect context: LifetimeConnect is no longer needed")
	}

	life, end := context.WithCancelCause(context.Background())
	ended := make(chan error, 1)
	lc := &LifetimeConnect{Transport: &mcp.SSEClientTransport{Endpoint: url}, Life: life, End: func(err error) {
		ended <- err
		end(err)
	}}
	cs = connectSSE(t, lc)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatalf("call after the Connect context ended: %v", err)
	}
	if len(ended) != 0 {
		t.Fatal("End called after a successful Connect")
	}
	end(errors.New("closed"))
	if !waitEnded(cs) {
		t.Error("the session outlived Life")
	}

	// A Connect context that ends first calls End.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	life, end = context.WithCancelCause(context.Background())
	defer end(nil)
	lc = &LifetimeConnect{Transport: &mcp.SSEClientTransport{Endpoint: url}, Life: life, End: func(err error) { ended <- err; end(err) }}
	if _, err := lc.Connect(ctx); err == nil {
		t.Error("Connect succeeded on an ended context")
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("End got %v", err)
	}
}
