//lint:file-ignore SA1019 the clients answer sampling, deprecated as of MCP 2026-07-28 but carried by the bridge.

package gateway

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// buildEverythingServer builds the go-sdk conformance everything-server
// into a temporary directory and returns its path.
func buildEverythingServer(t *testing.T) string {
	t.Helper()
	server := filepath.Join(t.TempDir(), "everything-server")
	build := exec.Command("go", "build", "-o", server, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the go-sdk conformance everything-server: %v\n%s", err, out)
	}
	return server
}

// startEverything starts the everything-server at path as backend name
// (a stdio child) at protocol version ("" negotiates the newest), and
// waits until its tools are registered in reg.
func startEverything(t *testing.T, reg *tool.Registry, name, path, version string) *mcpclient.Server {
	t.Helper()
	cfg := mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: path, AllowSampling: true, ProtocolVersion: version}
	srv, err := mcpclient.Start(cfg, mcpclient.Options{Registry: reg, Elicit: true, Sample: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return srv
}

// asked is a client that answers every elicitation by filling each string
// property of the form with "ada", and every sampling request with
// "Paris", and records what it was asked.
type asked struct {
	mu      sync.Mutex
	methods []string
}

func (a *asked) note(method string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.methods = append(a.methods, method)
}

func (a *asked) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.methods
	a.methods = nil
	return out
}

func (a *asked) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.note("elicitation/create")
			var schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			raw, _ := json.Marshal(req.Params.RequestedSchema)
			_ = json.Unmarshal(raw, &schema)
			content := map[string]any{}
			for name := range schema.Properties {
				content[name] = "ada"
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			a.note("sampling/createMessage")
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	})
}

// Every pairing of client and backend protocol versions: a backend's
// elicitation and sampling request reach the client that made the call,
// and the call completes with the client's answer. Backends: the go-sdk
// conformance everything-server pinned to 2025-11-25 (it asks in the
// middle of the call) and at 2026-07-28 (it answers input-required, and
// the bridge's backend client answers it). Clients: 2025-11-25 through
// the stateful gateway, the newest go-sdk client through the stateful
// gateway over HTTP (which leads it to 2025-11-25), through the stateless
// one and on a session of its own as serve --stdio has them (2026-07-28:
// it is asked through input-required results, each carrying the
// gateway's own requestState).
func TestQuestionsEveryPairing(t *testing.T) {
	server := buildEverythingServer(t)
	reg := tool.NewRegistry()
	old := startEverything(t, reg, "old", server, "2025-11-25")
	current := startEverything(t, reg, "new", server, "")
	for srv, want := range map[*mcpclient.Server]string{old: "2025-11-25", current: "2026-07-28"} {
		if got := srv.Status().ProtocolVersion; got != want {
			t.Fatalf("backend negotiated protocol %q, want %q", got, want)
		}
	}
	g := newGateway(t, reg, Options{})
	stateful := serveHTTP(t, g, Options{})
	stateless := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})
	overHTTP := func(base string) func() mcp.Transport {
		return func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: base + "/mcp"} }
	}
	inMemory := func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- g.ServeTransport(ctx, st) }()
		t.Cleanup(func() {
			stop()
			if err := <-served; err != nil {
				t.Errorf("ServeTransport: %v", err)
			}
		})
		return ct
	}

	clients := []struct {
		name                string
		transport           func() mcp.Transport
		version, negotiated string
	}{
		{"2025-11-25 client, stateful gateway", overHTTP(stateful), "2025-11-25", "2025-11-25"},
		{"newest client, stateful gateway", overHTTP(stateful), "", "2025-11-25"},
		{"2026-07-28 client, stateless gateway", overHTTP(stateless), "", "2026-07-28"},
		{"2026-07-28 client, stdio-like session", inMemory, "", "2026-07-28"},
	}
	calls := []struct {
		name, tool, args, asked, want string
	}{
		{"old-way elicitation", "mcp__old__test_elicitation", `{"message":"Your name?"}`, "elicitation/create", "Elicitation result: action=accept, content=map[username:ada]"},
		{"old-way sampling", "mcp__old__test_sampling", `{"prompt":"Capital of France?"}`, "sampling/createMessage", "LLM response: Paris"},
		{"input-required elicitation", "mcp__new__test_input_required_result_elicitation", `{}`, "elicitation/create", "Hello, ada!"},
		{"input-required sampling", "mcp__new__test_input_required_result_sampling", `{}`, "sampling/createMessage", "Sampling response: Paris"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			a := &asked{}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cs, err := a.client().Connect(ctx, c.transport(), &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != c.negotiated {
				t.Fatalf("negotiated protocol %q, want %q", got, c.negotiated)
			}
			for _, call := range calls {
				t.Run(call.name, func(t *testing.T) {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: json.RawMessage(call.args)})
					asked := a.take()
					if err != nil {
						t.Fatal(err)
					}
					if got := strings.Join(texts(res), "\n"); res.IsError || got != call.want {
						t.Errorf("got %q (isError %v), want %q", got, res.IsError, call.want)
					}
					if len(asked) != 1 || asked[0] != call.asked {
						t.Errorf("the client was asked %v, want [%s] once", asked, call.asked)
					}
				})
			}
		})
	}
}
