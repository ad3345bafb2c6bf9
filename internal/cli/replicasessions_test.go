package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// sessionGateway is a gateway entry of two identities whose replicas
// share sessions through the Redis at %s.
const sessionGateway = `- id: gw
  name: gateway
  config:
    auth: {tokens: {ci: GW_CI_AUTH, other: GW_OTHER_AUTH}}
    store: {redis: {url: "%s", keyPrefix: "%s:"}}
`

// Three `serve --http` replicas (sessions, not --stateless) sharing a
// real redis-server, behind a round-robin balancer. A 2025-11-25 client
// initializes through one and its session works through every replica:
// its calls go round, and its GET stream, opened on a replica that does
// not own the session, carries the owner's notifications as they come.
// Another identity naming the session is answered 404 through any
// replica; a request that claims to be forwarded by a replica without
// the replicas' secret is refused. When the owner is stopped (SIGSTOP),
// a request for its session through another replica is answered 503
// within seconds, and served again once it goes on (SIGCONT). When the
// owner is killed, the next request for its session gets 404 and a new
// session works.
func TestServeReplicasShareSessions(t *testing.T) {
	srv := mcptest.StartRedis(t)
	entries := fixtureEntries(t, "a") + fmt.Sprintf(sessionGateway, srv.URL(), t.Name())
	cfg := writeConfig(t, entries)
	replicas, urls := startReplicas(t, twoIdentities, "--config", cfg)
	balancer := httptest.NewServer(newRoundRobin(t, urls...).proxy())
	defer balancer.Close()
	cs := connectOld(t, balancer.URL+"/mcp")
	defer cs.Close()
	if cs.ID() == "" {
		t.Fatal("a 2025-11-25 client of `serve --http` has no session")
	}
	waitTools(t, cs, "mcp__a__greet")
	for i := range 6 { // twice through each replica
		got, isErr := callGreet(t, cs, fmt.Sprint("x", i))
		if isErr || !strings.Contains(got, fmt.Sprint("x", i)) {
			t.Fatalf("call %d through the balancer: %q (isError %v)", i, got, isErr)
		}
	}

	// A session opened on replicas[0] and used through the others: its
	// GET stream, on a replica that does not own it, carries the
	// owner's notifications.
	owner, others := replicas[0], []*servingProcess{replicas[1], replicas[2]}
	session := rawInitialize(t, owner.url, others[0].url)
	events := openStream(t, others[1].url, "ci-static-token", session)
	if err := os.WriteFile(cfg, []byte(fixtureEntries(t, "a", "b")+fmt.Sprintf(sessionGateway, srv.URL(), t.Name())), 0o644); err != nil {
		t.Fatal(err)
	}
	if line := waitEvent(t, events, "notifications/tools/list_changed"); line == "" {
		t.Error("the GET stream through a replica that does not own the session carries no tools/list_changed after a reload")
	}
	for _, p := range others {
		if code, body := postSession(t, p.url, "other-static-token", session, ""); code != http.StatusNotFound {
			t.Errorf("another identity naming the session through %s: HTTP %d %s, want 404", p.url, code, body)
		}
	}
	forged := fmt.Sprintf("%d.%x", time.Now().Unix(), make([]byte, 32))
	if code, body := postSession(t, owner.url, "ci-static-token", session, forged); code != http.StatusForbidden || !strings.Contains(body, "Mcp-Gateway-Replica") {
		t.Errorf("a forged forward to the owner: HTTP %d %s, want 403 naming the header", code, body)
	}
	if code, body := postSession(t, owner.url, "ci-static-token", session, ""); code != http.StatusOK {
		t.Errorf("the same request without the forged header: HTTP %d %s, want 200", code, body)
	}
	t.Logf("a ping of the session: %v at its owner, %v through another replica (the mean of 50)",
		meanPing(t, owner.url, session), meanPing(t, others[0].url, session))

	// The owner hung (stopped, not dead): a request for its session
	// through another replica is answered 503 within seconds, saying so,
	// and the session goes on once the owner does.
	owner.pause(t)
	start := time.Now()
	code, body := postSession(t, others[0].url, "ci-static-token", session, "")
	took := time.Since(start)
	if err := owner.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "does not answer") || took > 15*time.Second {
		t.Errorf("the session of a stopped owner through %s: HTTP %d %s after %v, want 503 saying its replica does not answer", others[0].url, code, body, took)
	}
	if code, body := postSession(t, others[0].url, "ci-static-token", session, ""); code != http.StatusOK {
		t.Errorf("the session through %s once its owner went on: HTTP %d %s, want 200", others[0].url, code, body)
	}

	if err := owner.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-owner.exited
	for _, p := range others {
		if code, body := postSession(t, p.url, "ci-static-token", session, ""); code != http.StatusNotFound {
			t.Errorf("the session of the killed owner through %s: HTTP %d %s, want 404", p.url, code, body)
		}
	}
	survivors := httptest.NewServer(newRoundRobin(t, others[0].url, others[1].url).proxy())
	defer survivors.Close()
	again := connectOld(t, survivors.URL+"/mcp")
	defer again.Close()
	for i := range 4 {
		if got, isErr := callGreet(t, again, "y"); isErr || !strings.Contains(got, "y") {
			t.Fatalf("call %d of a new session after the owner died: %q (isError %v)", i, got, isErr)
		}
	}
}

// twoIdentities is the environment of sessionGateway's two tokens.
var twoIdentities = []string{"GW_CI_AUTH=ci-static-token", "GW_OTHER_AUTH=other-static-token"}

// startReplicas starts three `serve --http 127.0.0.1:0` replicas with
// args and env, waits until each is ready, and returns them and their
// endpoints.
func startReplicas(t *testing.T, env []string, args ...string) (replicas []*servingProcess, urls []string) {
	t.Helper()
	for range 3 {
		p := startServing(t, env, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
		replicas, urls = append(replicas, p), append(urls, p.url)
	}
	for _, p := range replicas {
		mcptest.Eventually(t, 30*time.Second, func() bool { return ready(p) }, "%s to be ready", p.url)
	}
	return replicas, urls
}

// connectOld connects a 2025-11-25 client to endpoint as the identity ci.
func connectOld(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{"ci-static-token"}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// callGreet calls mcp__a__greet for name and returns its text.
func callGreet(t *testing.T, cs *mcp.ClientSession, name string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__greet", Arguments: map[string]any{"name": name}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// openStream opens session's GET stream at url as token's identity and
// returns its lines as they come; the stream ends with the test.
func openStream(t *testing.T, url, token, session string) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET stream through %s: HTTP %d %s", url, resp.StatusCode, body)
	}
	lines := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-t.Context().Done():
				return
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close(); <-done })
	return lines
}

// waitEvent returns the first line of events holding want, "" if the
// stream ends or 30s pass first.
func waitEvent(t *testing.T, events <-chan string, want string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-events:
			if !ok {
				return ""
			}
			if strings.Contains(line, want) {
				return line
			}
		case <-deadline:
			return ""
		}
	}
}

// rawInitialize opens a 2025-11-25 session as the identity ci at url,
// says it is initialized through then, and returns its id.
func rawInitialize(t *testing.T, url, then string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer ci-static-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize at %s: HTTP %d, session %q: %s", url, resp.StatusCode, session, body)
	}
	req, _ = http.NewRequest(http.MethodPost, then, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer ci-static-token")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized through %s: HTTP %d", then, resp.StatusCode)
	}
	return session
}

// meanPing is the mean time of 50 pings of session through url.
func meanPing(t *testing.T, url, session string) time.Duration {
	start := time.Now()
	for range 50 {
		if code, body := postSession(t, url, "ci-static-token", session, ""); code != http.StatusOK {
			t.Fatalf("ping through %s: HTTP %d %s", url, code, body)
		}
	}
	return time.Since(start) / 50
}

// sessionPings numbers the pings postSession sends.
var sessionPings atomic.Int64

// postSession posts a ping for session to url as token's identity, with
// the replica header forward when not empty, and returns the status and
// body.
func postSession(t *testing.T, url, token, session, forward string) (int, string) {
	t.Helper()
	// Each ping is a request of its own, with its own id, as a client's
	// next request is: the ping forwarded to a stopped owner is read by it
	// once it goes on, and an id of a request it still serves is refused.
	frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, sessionPings.Add(1))
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(frame))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if forward != "" {
		req.Header.Set("Mcp-Gateway-Replica", forward)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
