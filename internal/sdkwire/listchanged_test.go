package sdkwire

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCounts counts, per server session, the tools list_changed
// notifications a sending middleware passed and dropped.
type sessionCounts struct {
	mu      sync.Mutex
	drop    *mcp.ServerSession
	passed  map[mcp.Session]int
	dropped map[mcp.Session]int
}

func (c *sessionCounts) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != ToolListChanged {
			return next(ctx, method, req)
		}
		c.mu.Lock()
		drop := req.GetSession() == mcp.Session(c.drop)
		if drop {
			c.dropped[req.GetSession()]++
		} else {
			c.passed[req.GetSession()]++
		}
		c.mu.Unlock()
		if drop {
			return DropNotification()
		}
		return next(ctx, method, req)
	}
}

func (c *sessionCounts) get(m map[mcp.Session]int, s *mcp.ServerSession) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m[s]
}

// listener connects a client that counts the list_changed it hears.
func listener(t *testing.T, srv *mcp.Server, version string) (*mcp.ServerSession, *atomic.Int64) {
	t.Helper()
	heard := &atomic.Int64{}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient(&mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		heard.Add(1)
	}}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ss, heard
}

// Assumption 22: adding again a tool the server lists, unchanged, makes
// the SDK send tools list_changed to each session (on 2026-07-28, to each
// listening for it) through the sending middleware, with that session as
// the request's session; a middleware that returns DropNotification
// without calling next keeps it from that session alone.
func TestContractToolListChangedPerSession(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			srv := newServer(&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
			counts := &sessionCounts{passed: map[mcp.Session]int{}, dropped: map[mcp.Session]int{}}
			srv.AddSendingMiddleware(counts.middleware)
			ssA, heardA := listener(t, srv, version)
			ssB, heardB := listener(t, srv, version)
			counts.mu.Lock()
			counts.drop = ssB
			counts.mu.Unlock()
			echo := &mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}
			readd := func() {
				srv.AddTool(echo, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
				time.Sleep(20 * time.Millisecond) // past the SDK's 10 ms debounce
			}
			// On 2026-07-28 the client's listen opens after Connect returns:
			// add again until both sessions take part.
			waitFor(t, "A to hear list_changed and B's to be dropped", func() bool {
				readd()
				return int(heardA.Load()) > 0 && counts.get(counts.dropped, ssB) > 0
			})
			if n := int(heardB.Load()); n != 0 {
				t.Fatalf("B heard %d list_changed, all dropped", n)
			}
			counts.mu.Lock()
			counts.drop = nil
			counts.mu.Unlock()
			waitFor(t, "B to hear list_changed once let through", func() bool {
				readd()
				return int(heardB.Load()) > 0
			})
			waitFor(t, "B to hear every one passed", func() bool { return int(heardB.Load()) >= counts.get(counts.passed, ssB) })
			if heard, passed := int(heardB.Load()), counts.get(counts.passed, ssB); heard != passed {
				t.Errorf("B heard %d list_changed, %d were let through", heard, passed)
			}
			if counts.get(counts.passed, ssA) == 0 || counts.get(counts.dropped, ssA) != 0 {
				t.Errorf("A: %d passed, %d dropped", counts.get(counts.passed, ssA), counts.get(counts.dropped, ssA))
			}
		})
	}
}
