package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// recordingGate refuses "deny" (an isError result) and "forbid" (a
// JSON-RPC error), lets the rest through with a value on the context, and
// records what it was asked and told.
type recordingGate struct {
	mu  sync.Mutex
	log []string
}

type gateKey struct{}

func (r *recordingGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	r.add("enter " + c.Tool + " as " + c.Public + " header " + c.Header.Get("X-Who"))
	switch c.Tool {
	case "deny":
		return nil, nil, errors.New("not for you")
	case "forbid":
		return nil, nil, &jsonrpc.Error{Code: -32001, Message: "forbidden"}
	}
	return context.WithValue(ctx, gateKey{}, "admitted"), func(o Outcome) error {
		r.add("ended " + c.Tool + " isError " + map[bool]string{true: "yes", false: "no"}[o.IsError])
		if c.Tool == "unrecorded" { // its end could not be recorded (an audit line not written)
			return &jsonrpc.Error{Code: -32032, Message: "not recorded"}
		}
		return nil
	}, nil
}

func (r *recordingGate) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *recordingGate) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.log
	r.log = nil
	return got
}

// headerTransport sets X-Who on every request.
type headerTransport struct{}

func (headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Who", "ada")
	return http.DefaultTransport.RoundTrip(req)
}

// The Gate is consulted on every path a tools/call takes (the SDK's
// session over memory and HTTP, the stdio and HTTP takes): it sees the call,
// its refusal answers the call without running the tool, the context it
// returns reaches the tool, and it is told of the outcome; an end it
// could not record (an audit line not written) answers the call with its
// error, not the result (which used to go out unrecorded).
func TestGateOnEveryPath(t *testing.T) {
	reg := tool.NewRegistry()
	ran := make(chan string, 10)
	body := func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		v, _ := ctx.Value(gateKey{}).(string)
		ran <- v
		return tool.Output{Content: []tool.Content{tool.Text(v)}}, nil
	}
	for _, name := range []string{"ok", "deny", "forbid", "unrecorded"} {
		if _, err := reg.Register(goTool(name, body)); err != nil {
			t.Fatal(err)
		}
	}
	paths := map[string]func(t *testing.T, g *Gateway) *client{
		"SDK in memory": func(t *testing.T, g *Gateway) *client { return connectInMemoryAt(t, g, "") },
		"take":          func(t *testing.T, g *Gateway) *client { return connectInMemoryAt(t, g, "2025-11-25") },
		"HTTP take": func(t *testing.T, g *Gateway) *client {
			return connectHTTP(t, serveHTTP(t, g, Options{}), &http.Client{Transport: headerTransport{}})
		},
		"SDK over HTTP": func(t *testing.T, g *Gateway) *client {
			// A client that offers what the take does not read goes the
			// SDK's way.
			experimental := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{Experimental: map[string]any{"x": map[string]any{}}},
			})
			cs, err := experimental.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, g, Options{}) + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return &client{session: cs}
		},
	}
	for name, connect := range paths {
		t.Run(name, func(t *testing.T) {
			gate := &recordingGate{}
			g := newGateway(t, reg, Options{Gate: gate})
			viaSDK := sdkCalls(g)
			c := connect(t, g)
			who := ""
			if strings.Contains(name, "HTTP") {
				who = "ada"
			}
			if res := c.call(t, "ok", ""); res.IsError || cmp.Diff([]string{"admitted"}, texts(res)) != "" {
				t.Errorf("ok: isError %v, %q", res.IsError, texts(res))
			}
			if res := c.call(t, "deny", ""); !res.IsError || cmp.Diff([]string{"Error: tool call refused: not for you"}, texts(res)) != "" {
				t.Errorf("deny: isError %v, %q", res.IsError, texts(res))
			}
			_, err := c.session.CallTool(context.Background(), callParams("forbid"))
			if wire, ok := errors.AsType[*jsonrpc.Error](err); !ok || wire.Code != -32001 || wire.Message != "forbidden" {
				t.Errorf("forbid: %v, want the Gate's JSON-RPC error", err)
			}
			_, err = c.session.CallTool(context.Background(), callParams("unrecorded"))
			if wire, ok := errors.AsType[*jsonrpc.Error](err); !ok || wire.Code != -32032 {
				t.Errorf("unrecorded: %v, want the Gate's error in place of the result", err)
			}
			want := []string{"enter ok as ok header " + who, "ended ok isError no", "enter deny as deny header " + who, "enter forbid as forbid header " + who,
				"enter unrecorded as unrecorded header " + who, "ended unrecorded isError no"}
			if diff := cmp.Diff(want, gate.take()); diff != "" {
				t.Errorf("the Gate's record (-want +got):\n%s", diff)
			}
			if len(ran) != 2 {
				t.Errorf("the tools ran %d times, want ok's and unrecorded's", len(ran))
			}
			<-ran
			<-ran
			if fast := viaSDK.Load() == 0; fast != strings.Contains(name, "take") {
				t.Errorf("the take answered: %v", fast)
			}
		})
	}
}

// callParams calls name without arguments.
func callParams(name string) *mcp.CallToolParams { return &mcp.CallToolParams{Name: name} }

// A task whose end the Gate could not record keeps its result: its
// client reads it later, and the Gate refuses the calls after. Only a
// call answered at once is held back (TestGateOnEveryPath).
func TestUnrecordedTaskKeepsItsResult(t *testing.T) {
	reg := tool.NewRegistry()
	job := goTool("unrecorded", textBody("kept"))
	job.Background = true
	if _, err := reg.Register(job); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, Gate: &recordingGate{}}
	g := newGateway(t, reg, opts)
	c := &rawHTTP{t: t, endpoint: serveHTTP(t, g, opts) + "/mcp", perRequest: true}
	var id string
	waitFor(t, "the task made", func() bool {
		var task struct {
			TaskID string `json:"taskId"`
		}
		json.Unmarshal(c.request("tools/call", `{"name":"unrecorded","arguments":{},`+meta2026+`}`).Result, &task)
		id = task.TaskID
		return id != ""
	})
	var got string
	waitFor(t, "the task to end", func() bool {
		got = string(c.request("tasks/get", idParams(id)).Result)
		return !strings.Contains(got, `"status":"working"`)
	})
	if !strings.Contains(got, `"status":"completed"`) || !strings.Contains(got, "kept") {
		t.Errorf("the task whose end was not recorded: %s, want it completed with its result", got)
	}
}
