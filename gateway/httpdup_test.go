package gateway

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// sdkWaitCall is waitCall in params the take leaves to the SDK (a
// member the SDK ignores), so the SDK's handler serves it.
const sdkWaitCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","x":1}}`

// duplicateRefusal is the SDK's answer to a POST whose request id is in
// flight on the session.
const duplicateRefusal = `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"duplicate in-flight request ID 7"}}`

// A session's request ids are one table over both paths, as they are the
// SDK's alone: while a call is in flight on one path, a POST with its id
// is refused on the other too, as the SDK refuses it, and the id is free
// again once the call ended.
func TestHTTPDuplicateIDAcrossPaths(t *testing.T) {
	for _, tc := range []struct {
		name, first, second string
		firstBySDK          bool
	}{
		{"take, then the SDK's", waitCall, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, false},
		{"the SDK's, then the take", sdkWaitCall, waitCall, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, release, exited := waitingTool(t, reg)
			g := newGateway(t, reg, Options{})
			sdk := sdkCalls(g)
			s := openHTTPSession(t, serveHTTP(t, g, Options{}))
			firstDone := s.sendAside(tc.first)
			waitSignal(t, entered, "the first call to start")
			if bySDK := sdk.Load() == 1; bySDK != tc.firstBySDK {
				t.Fatalf("the first call went the SDK's way: %v, want %v", bySDK, tc.firstBySDK)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			refusedIn, stop := context.WithTimeout(ctx, 10*time.Second) // a refusal is at once; a call taken waits
			defer stop()
			status, body := postFor(t, refusedIn, s, tc.second)
			if status != http.StatusBadRequest || body != duplicateRefusal {
				t.Errorf("id 7 again while in flight: %d %s, want 400 %s", status, body, duplicateRefusal)
			}
			close(release)
			if cause := waitSignal(t, exited, "the first call to end"); cause != nil {
				t.Errorf("the first call was cancelled: %v", cause)
			}
			<-firstDone
			if status, body := postFor(t, ctx, s, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`); status != http.StatusOK {
				t.Errorf("id 7 after its call ended: %d %s, want it served", status, body)
			}
		})
	}
}

// postFor posts body on s under ctx and returns the status and the body.
func postFor(t *testing.T, ctx context.Context, s *httpSession, body string) (int, string) {
	t.Helper()
	resp, err := s.send(ctx, body)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", body, err)
	}
	return resp.StatusCode, string(b)
}
