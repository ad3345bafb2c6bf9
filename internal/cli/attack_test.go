package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// `mcpbridge serve --http --token-env` under the attacks of the HTTP
// edge, as a real process measured from /proc: 1,000 sockets sending
// 900 KB of headers they never finish must not grow its memory, and 1,100
// unauthenticated sockets declaring bodies they never send must not lock
// an authorized client out.
func TestServeUnderAttack(t *testing.T) {
	mcptest.RaiseFDLimit(t, 4096) // inherited by the serve child
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServingCmd(t, measuredCommand(t, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH"), []string{"GW_AUTH=s3cret"})
	addr := strings.TrimPrefix(p.base(), "http://")
	servedUnderAttack(t, p)
	before := procStatusKiB(t, p.pid, "VmRSS")

	pad := []byte("GET /livez HTTP/1.1\r\nHost: " + addr + "\r\nX-Pad: " + strings.Repeat("a", 900<<10))
	conns := attackDial(t, addr, 1000)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(pad)
			// Until serve answers (431) and closes, or 5 s: by then it has
			// read what it was going to.
			io.Copy(io.Discard, c)
		})
	}
	wg.Wait()
	after := procStatusKiB(t, p.pid, "VmRSS")
	peak := procStatusKiB(t, p.pid, "VmHWM")
	t.Logf("1,000 sockets × 900 KB of unfinished headers: serve's RSS %d -> %d MiB (peak %d MiB)", before>>10, after>>10, peak>>10)
	if grown := peak - before; grown > 100<<10 {
		t.Errorf("serve's peak RSS grew by %d MiB under 1,000 unfinished 900 KB headers, want under 100 MiB", grown>>10)
	}
	attackClose(conns)

	conns = attackDial(t, addr, 1100)
	for _, c := range conns {
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n")
	}
	start := time.Now()
	servedUnderAttack(t, p)
	t.Logf("1,100 sockets declaring unsent bodies: an authorized client connected and called in %v", time.Since(start).Round(time.Millisecond))
	attackClose(conns)
}

// Four parallel JSON-RPC batches of 40,000 tools/list (protocol
// 2025-03-26) are refused whole, and serve's memory stays where it was.
func TestServeBatchesUnderAttack(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH")
	hc := &http.Client{Transport: attackBearer{"s3cret", http.DefaultTransport}}
	post := func(session, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msgs := make([]string, 40000)
	for i := range msgs {
		msgs[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/list"}`
	}
	batch := "[" + strings.Join(msgs, ",") + "]"
	before := procStatusKiB(t, p.pid, "VmRSS")
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp, body := post(session, batch)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) {
				t.Errorf("a 40,000-message batch: status %d, %.200s; want 400 and -32600", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	peak := procStatusKiB(t, p.pid, "VmHWM")
	t.Logf("4 parallel batches of 40,000 tools/list: answered in %v, serve's RSS %d MiB -> peak %d MiB", time.Since(start).Round(time.Millisecond), before>>10, peak>>10)
	if grown := peak - before; grown > 100<<10 {
		t.Errorf("serve's peak RSS grew by %d MiB, want under 100 MiB", grown>>10)
	}
}

// servedUnderAttack checks, within 5 s, that a client with the token reaches
// /livez, connects and calls a tool.
func servedUnderAttack(t *testing.T, p *servingProcess) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: attackBearer{"s3cret", tr}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base()+"/livez", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("an authorized client could not reach /livez: %v", err)
	}
	resp.Body.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("an authorized client could not connect: %v", err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__greet", Arguments: map[string]any{"name": "x"}}); err != nil {
		t.Fatalf("an authorized client could not call: %v", err)
	}
}

// attackBearer adds a bearer token to every request sent over tr.
type attackBearer struct {
	token string
	tr    http.RoundTripper
}

func (b attackBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.tr.RoundTrip(r)
}

func attackDial(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() { attackClose(conns) })
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dialing connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	return conns
}

func attackClose(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// procStatusKiB reads a field (in kB) of /proc/PID/status.
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	n, err := readProcStatusKiB(pid, field)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readProcStatusKiB is procStatusKiB's reading, for a process that may
// have exited.
func readProcStatusKiB(pid int, field string) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
