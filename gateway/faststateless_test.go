package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// sdkPathSession is the Mcp-Session-Id a stateless test POST sends to
// have the SDK answer it: the SDK's stateless handler reads none.
const sdkPathSession = "sdk-path"

// postStateless posts body to a stateless gateway at base as a 2025-11-25
// client does, through the SDK's path when sdkPath; the response is the
// caller's.
func postStateless(ctx context.Context, t *testing.T, base, body string, sdkPath bool, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sdkPath {
		req.Header.Set("Mcp-Session-Id", sdkPathSession)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		t.Fatal(err)
	}
	return resp
}

// readStateless posts body and returns the status, the whole body and
// the header of the response.
func readStateless(t *testing.T, base, body string, sdkPath bool, header ...string) (int, string, http.Header) {
	t.Helper()
	resp := postStateless(context.Background(), t, base, body, sdkPath, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// In stateless mode a request is no session to count: calls in flight
// beyond MaxSessions evict none of the others (each
// closed the request that began first, cancelling its call).
func TestHTTPStatelessCallsEvictNothing(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{Stateless: true, MaxSessions: 1})
	base := serveHTTP(t, g, Options{})
	var wg sync.WaitGroup
	for _, sdkPath := range []bool{true, true, false} {
		wg.Go(func() {
			_, body, _ := readStateless(t, base, waitCall, sdkPath)
			if !strings.Contains(body, "released") {
				t.Errorf("a waiting call (SDK path: %v) answered %s", sdkPath, body)
			}
		})
		waitSignal(t, entered, "a call to start")
	}
	close(release)
	for range 3 {
		if err := waitSignal(t, exited, "a call to end"); err != nil {
			t.Errorf("a call ended with %v", err)
		}
	}
	wg.Wait()
}
