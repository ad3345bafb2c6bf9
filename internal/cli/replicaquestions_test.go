package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// Three `serve --http --stateless` replicas sharing a real redis-server,
// behind a round-robin balancer, in front of a backend that asks its
// client in the middle of a call: a 2026-07-28 client's call is
// answered input-required by one replica, and its call again with the
// answers, which the balancer sends to the next replica, reaches the
// replica holding the parked call. Three calls: each replica hands its
// parked call's answers on to the next.
func TestServeReplicasShareQuestions(t *testing.T) {
	t.Parallel()
	srv := mcptest.StartRedis(t)
	cfg := askerConfig(t, "", fmt.Sprintf(sessionGateway, srv.URL(), t.Name()))
	replicas, urls := startReplicas(t, twoIdentities, "--stateless", "--config", cfg)
	rr := newRoundRobin(t, urls...)
	balancer := httptest.NewServer(rr.proxy())
	defer balancer.Close()
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada", "size": "l"}}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: balancer.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"ci-static-token"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28", v)
	}
	waitTools(t, cs, "mcp__asker__order")
	for i := range 3 {
		got, isErr := callText(t, cs, "mcp__asker__order", `{}`)
		if isErr || got != `accept {"gift":false,"name":"ada","quantity":1,"size":"l"}` {
			t.Fatalf("call %d, its answers through another replica: %q (isError %v)", i, got, isErr)
		}
	}
	if asked.Load() != 3 {
		t.Errorf("the client was asked %d times for 3 calls", asked.Load())
	}

	// A state given by replicas[0], brought back through replicas[1] by
	// another identity: the owner refuses it, as its own would be. When
	// replicas[0] is killed, its state is one no replica holds.
	const order = `{"name":"mcp__asker__order","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`
	first := rawPost(t, urls[0], "ci-static-token", order)
	state := requestStateIn.FindStringSubmatch(first)
	if state == nil {
		t.Fatalf("a call through %s: %s, want input-required with a requestState", urls[0], first)
	}
	retry := strings.Replace(order, `"arguments":{}`, `"arguments":{},"requestState":"`+state[1]+`","inputResponses":{}`, 1)
	if got := rawPost(t, urls[1], "other-static-token", retry); !strings.Contains(got, "requestState is not one this gateway holds") {
		t.Errorf("another identity's retry through another replica: %s, want the state refused", got)
	}
	if err := replicas[0].signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-replicas[0].exited
	if got := rawPost(t, urls[2], "ci-static-token", retry); !strings.Contains(got, "requestState is not one this gateway holds") {
		t.Errorf("a retry after the replica holding the call was killed: %s, want the state refused", got)
	}
}

// requestStateIn finds the requestState in an answer.
var requestStateIn = regexp.MustCompile(`"requestState":"([^"]+)"`)

// rawPost posts a tools/call of params to url as token's identity and
// returns the answer as sent (JSON or an event stream).
func rawPost(t *testing.T, url, token, params string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "mcp__asker__order")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("HTTP %d %s", resp.StatusCode, body)
}
