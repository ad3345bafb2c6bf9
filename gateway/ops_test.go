package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The probes: /healthz is OK only with every backend OK, /readyz once the
// first start settled whatever the backends, /livez while open.
func TestProbes(t *testing.T) {
	ready := make(chan struct{})
	g := newGateway(t, tool.NewRegistry(), Options{Ready: ready, Health: func() []BackendState {
		return []BackendState{{Name: "broken", State: "failed"}}
	}})
	probe := func(path string) int {
		rec := httptest.NewRecorder()
		g.Probes().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var h Health
		if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil || len(h.Backends) != 1 {
			t.Errorf("%s body %q: %v", path, rec.Body, err)
		}
		return rec.Code
	}
	for _, step := range []struct {
		name                    string
		act                     func()
		health, ready, liveCode int
	}{
		{"starting", func() {}, 503, 503, 200},
		{"ready, one backend broken", func() { close(ready) }, 503, 200, 200},
		{"closed", func() { g.Close() }, 503, 503, 503},
	} {
		step.act()
		got := []int{probe("/healthz"), probe("/readyz"), probe("/livez")}
		if want := []int{step.health, step.ready, step.liveCode}; !slices.Equal(got, want) {
			t.Errorf("%s: /healthz /readyz /livez = %v, want %v", step.name, got, want)
		}
	}
}

// observed records what an Observer is told.
type observed struct {
	mu       sync.Mutex
	requests []string
	calls    []string // name, then "ok", "error" or "cancelled" when it ended
}

func (o *observed) Request(method string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests = append(o.requests, method)
}

func (o *observed) CallStarted(name string) func(tool.Result, bool) {
	o.mu.Lock()
	o.calls = append(o.calls, name)
	o.mu.Unlock()
	return func(res tool.Result, cancelled bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		switch {
		case cancelled:
			o.calls = append(o.calls, "cancelled")
		case res.IsError:
			o.calls = append(o.calls, "error")
		default:
			o.calls = append(o.calls, "ok")
		}
	}
}

// Over stateless HTTP, a go-sdk client (protocol 2026-07-28) gets no
// session id; the Observer hears of each request and call, and /metrics is
// served behind the bearer token.
func TestStatelessObservedAndMetrics(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("one", textBody("1")), goTool("bad", func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{}, errors.New("broken")
	})); err != nil {
		t.Fatal(err)
	}
	obs := &observed{}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("metrics here\n")) })
	opts := Options{Stateless: true, Observer: obs, Metrics: metrics, BearerToken: "tok"}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)

	for _, tc := range []struct {
		token string
		want  int
	}{{"", 401}, {"tok", 200}} {
		req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("/metrics with token %q: %d, want %d", tc.token, resp.StatusCode, tc.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
		t.Errorf("protocol %q, session id %q; want 2026-07-28 without a session", v, cs.ID())
	}
	for _, name := range []string{"one", "bad"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	// Each stateless request has a session for its length (the client's
	// subscriptions/listen stream holds one open); none outlives the client.
	cs.Close()
	waitFor(t, "no session left", func() bool { return g.Sessions() == 0 })
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if want := []string{"one", "ok", "bad", "error"}; !slices.Equal(obs.calls, want) {
		t.Errorf("observed calls %v, want %v", obs.calls, want)
	}
	if n := countOf(obs.requests, "tools/call"); n != 2 || slices.ContainsFunc(obs.requests, func(m string) bool { return m == "notifications/initialized" }) {
		t.Errorf("observed requests %v, want two tools/call and no notification", obs.requests)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// metaKey marks what CallContext put in a call's context.
type metaKey struct{}

// CallContext derives each call's context from the request's _meta; the
// tool body runs in it; the Observer hears of the request and the call.
func TestCallContext(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // the SDK's path, the take
		t.Run("version "+version, func(t *testing.T) { callContext(t, version) })
	}
}

func callContext(t *testing.T, version string) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("seen", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		v, _ := ctx.Value(metaKey{}).(string)
		return tool.Output{Content: []tool.Content{tool.Text(v)}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	obs := &observed{}
	g := newGateway(t, reg, Options{Observer: obs, CallContext: func(ctx context.Context, meta map[string]any) context.Context {
		v, _ := meta["traceparent"].(string)
		return context.WithValue(ctx, metaKey{}, "from meta: "+v)
	}})
	viaSDK := sdkCalls(g)
	c := connectInMemoryAt(t, g, version)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "seen", Meta: mcp.Meta{"traceparent": "00-abc"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); !slices.Equal(got, []string{"from meta: 00-abc"}) {
		t.Errorf("the body saw %v", got)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if countOf(obs.requests, "tools/call") != 1 || !slices.Equal(obs.calls, []string{"seen", "ok"}) {
		t.Errorf("observed requests %v, calls %v; want one tools/call, seen ok", obs.requests, obs.calls)
	}
	if taken := viaSDK.Load() == 0; taken != (version != "") {
		t.Errorf("the take answered the call: %v, want %v", taken, version != "")
	}
}
