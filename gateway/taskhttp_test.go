package gateway

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// rawHTTP is a raw Streamable HTTP client session (protocol 2025-11-25)
// with a bearer token; with perRequest, a 2026-07-28 client without a
// session, which names each request's protocol, method and name in its
// headers as the SDK requires.
type rawHTTP struct {
	t                 *testing.T
	hc                *http.Client // nil: http.DefaultClient
	endpoint, token   string
	session, initBody string
	nextID            int
	perRequest        bool
}

func openRawHTTP(t *testing.T, base, token string) *rawHTTP {
	t.Helper()
	c := &rawHTTP{t: t, endpoint: base + "/mcp", token: token}
	m, resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.session, c.initBody = resp.Header.Get("Mcp-Session-Id"), string(m.Result)
	if c.session == "" {
		t.Fatalf("initialize: no session: %s", m.Result)
	}
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// request posts a request and returns its response.
func (c *rawHTTP) request(method, params string) wireMessage {
	c.t.Helper()
	c.nextID++
	m, _ := c.postWith(`{"jsonrpc":"2.0","id":`+strconv.Itoa(c.nextID)+`,"method":"`+method+`","params":`+params+`}`, c.headersOf(method, params))
	return m
}

// headersOf is the headers a perRequest client sends with a request of
// method with params; nil for any other client.
func (c *rawHTTP) headersOf(method, params string) http.Header {
	if !c.perRequest {
		return nil
	}
	h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {method}}
	var p struct{ Name string }
	if json.Unmarshal([]byte(params), &p) == nil && p.Name != "" {
		h.Set("Mcp-Name", p.Name)
	}
	return h
}

// do sends a request of method without a body (a GET stream, a DELETE)
// in c's session and returns its response.
func (c *rawHTTP) do(method string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.endpoint, nil)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := cmp.Or(c.hc, http.DefaultClient).Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// post posts frame in c's session and reads the response to it, from a
// JSON body or an event stream.
func (c *rawHTTP) post(frame string) (wireMessage, *http.Response) {
	c.t.Helper()
	return c.postWith(frame, nil)
}

// postWith is post with the headers of header added.
func (c *rawHTTP) postWith(frame string, header http.Header) (wireMessage, *http.Response) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(frame))
	for key, values := range header {
		req.Header[key] = values
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := cmp.Or(c.hc, http.DefaultClient).Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m wireMessage
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		m.Error = &struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}{resp.StatusCode, string(b)}
		return m, resp
	}
	if resp.StatusCode == http.StatusAccepted {
		return m, resp
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			c.t.Fatalf("decoding the answer to %s: %v", frame, err)
		}
		return m, resp
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &m) == nil && m.Method == "" {
			return m, resp
		}
		m = wireMessage{}
	}
	c.t.Fatalf("no answer to %s in the event stream", frame)
	return m, resp
}

// Over stateful Streamable HTTP with identities, the gateway declares
// tasks, and a task belongs to the identity and session that created it:
// alice's other session and bob get what a made-up id gets, list none of
// hers, cannot cancel it, and bob presenting alice's session id is not
// served at all.
func TestGatewayHTTPTasksStayWithTheirOwner(t *testing.T) {
	const secret = "backend-task-9c1e"
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("report", "")}}},
		Results: map[string]json.RawMessage{"report": json.RawMessage(`{"resultType":"task","taskId":"` + secret + `","status":"completed","result":{"content":[{"type":"text","text":"the report"}]}}`)},
	}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "tk", script)
	opts := Options{Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	alice, alice2, bob := openRawHTTP(t, base, "alice-secret"), openRawHTTP(t, base, "alice-secret"), openRawHTTP(t, base, "bob-secret")
	if !strings.Contains(alice.initBody, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize declares no tasks: %s", alice.initBody)
	}
	waitFor(t, "the backend's tool served", func() bool {
		return strings.Contains(string(alice.request("tools/list", `{}`).Result), "mcp__tk__report")
	})
	id := taskOf(t, alice.request("tools/call", `{"name":"mcp__tk__report","arguments":{},"task":{"ttl":60000}}`))
	waitFor(t, "alice's task completed", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
	})

	for _, other := range []*rawHTTP{alice2, bob} {
		for _, guess := range []string{id, secret} {
			answeredAsUnknown(t, other.token, other, guess, "tasks/get", "tasks/result", "tasks/cancel")
		}
		if list := other.request("tasks/list", `{}`); string(list.Result) != `{"tasks":[]}` {
			t.Errorf("%s's tasks/list: %s %+v", other.token, list.Result, list.Error)
		}
	}
	// Bob replaying alice's session id with his own credential.
	stolen := &rawHTTP{t: t, endpoint: alice.endpoint, token: "bob-secret", session: alice.session}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list"} {
		if m := stolen.request(method, idParams(id)); m.Error == nil || m.Error.Code != http.StatusNotFound {
			t.Errorf("bob's %s in alice's session: result %s, error %+v", method, m.Result, m.Error)
		}
	}
	res := alice.request("tasks/result", idParams(id))
	if !strings.Contains(string(res.Result), "the report") || strings.Contains(string(res.Result), secret) {
		t.Errorf("alice's tasks/result after the others' attempts: %s %+v", res.Result, res.Error)
	}
}

// An HTTP session's end (DELETE) cancels its tasks still running.
func TestGatewayHTTPTasksEndWithTheirSession(t *testing.T) {
	reg := tool.NewRegistry()
	started, ended := make(chan struct{}, 1), make(chan struct{}, 1)
	if _, err := reg.Register(goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- struct{}{}
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "tok"}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := openRawHTTP(t, base, "tok")
	taskOf(t, c.request("tools/call", `{"name":"hold","arguments":{},"task":{}}`))
	waitSignal(t, started, "the task running")
	c.do(http.MethodDelete).Body.Close()
	waitSignal(t, ended, "the task cancelled")
}

// Over stateful HTTP, a task's question reaches its client on the
// session's stream (the call's own POST was answered long before), and
// the answer reaches the tool.
func TestGatewayHTTPTaskAsksItsClient(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", false)); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "tok"}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := &rawHTTP{t: t, endpoint: base + "/mcp", token: "tok"}
	m, resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m.Error != nil {
		t.Fatalf("initialize: %+v", m.Error)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Authorization", "Bearer tok")
	get.Header.Set("Mcp-Session-Id", c.session)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	id := taskOf(t, c.request("tools/call", `{"name":"ask","arguments":{},"task":{}}`))
	var q wireMessage
	if err := json.Unmarshal([]byte(sseField(t, bufio.NewReader(stream.Body), "data")), &q); err != nil || q.Method != "elicitation/create" {
		t.Fatalf("the stream carried %+v, %v", q, err)
	}
	if !strings.Contains(string(q.Params), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("the question names no task: %s", q.Params)
	}
	if st := c.request("tasks/get", idParams(id)); !strings.Contains(string(st.Result), `"status":"input_required"`) {
		t.Errorf("tasks/get while asking: %s", st.Result)
	}
	c.post(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":{"pick":"heron"}}}`)
	if res := c.request("tasks/result", idParams(id)); !strings.Contains(string(res.Result), "heron") {
		t.Errorf("tasks/result: %s %+v", res.Result, res.Error)
	}
}
