package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A session with MaxCallsPerSession calls in flight has the next one
// refused at once with a JSON-RPC error naming the limit; once one ends,
// calls are admitted again.
func TestCallsPerSessionBounded(t *testing.T) {
	reg := tool.NewRegistry()
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	if _, err := reg.Register(goTool("block", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return tool.Output{Content: []tool.Content{tool.Text("released")}}, nil
	}), goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	c := connectRaw(t, newGateway(t, reg, Options{MaxCallsPerSession: 2}))
	for id := 101; id <= 102; id++ {
		c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"block"}}`)
		waitSignal(t, started, "a blocking call to start")
	}
	refused := c.request("tools/call", `{"name":"quick"}`)
	if refused.Error == nil || !strings.Contains(refused.Error.Message, "too many tool calls in flight on this session (the gateway's limit is 2)") {
		t.Fatalf("third call: %+v, want a JSON-RPC error naming the limit", refused)
	}
	close(release)
	for answered := map[string]bool{}; len(answered) < 2; {
		var m wireMessage
		if err := json.Unmarshal(waitSignal(t, c.lines, "the blocked calls' answers"), &m); err != nil {
			t.Fatal(err)
		}
		if id := string(m.ID); id == "101" || id == "102" {
			answered[id] = true
			if m.Error != nil {
				t.Errorf("blocked call %s: %+v", id, m.Error)
			}
		}
	}
	if m := c.request("tools/call", `{"name":"quick"}`); m.Error != nil {
		t.Errorf("a call after the others ended: %+v", m.Error)
	}
}

// Clients without the token get 401 and their keep-alive connections are
// closed by the gateway, so a flood of them holds no file descriptors,
// while an authorized client is served.
func TestUnauthorizedConnectionsClosed(t *testing.T) {
	reg := tool.NewRegistry()
	opts := Options{BearerToken: "s3cret"}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	addr := strings.TrimPrefix(base, "http://")
	const n = 50
	for i := range n {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\nConnection: keep-alive\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Fatalf("connection %d: status %d, close %v; want 401 and Connection: close", i, resp.StatusCode, resp.Close)
		}
		// The server closes its end: a read returns EOF, not a timeout.
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("connection %d stayed open after its 401: %v", i, err)
		}
		conn.Close()
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("authorized client after the flood: status %d", resp.StatusCode)
	}
}

// Past MaxSessions, a new session closes the one idle longest: sessions
// stay bounded however many clients come and never leave.
func TestSessionsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("quick", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{MaxSessions: 3})
	var clients []*client
	for range 6 {
		c := connectInMemory(t, g)
		c.names(t) // some activity, in connection order
		clients = append(clients, c)
	}
	count := func() int {
		n := 0
		for range g.server.Sessions() {
			n++
		}
		return n
	}
	waitFor(t, "sessions to be evicted down to the limit", func() bool { return count() <= 3 })
	for i, c := range clients[:3] {
		done := make(chan error, 1)
		go func() { done <- c.session.Wait() }()
		waitSignal(t, done, "evicted session "+strconv.Itoa(i)+" to end")
	}
	for i, c := range clients[3:] {
		if got := texts(c.call(t, "quick", `{}`)); len(got) != 1 || got[0] != "ok" {
			t.Errorf("recent session %d: %v", i+3, got)
		}
	}
}
