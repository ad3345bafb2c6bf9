//lint:file-ignore SA1019 the clients answer sampling, deprecated as of MCP 2026-07-28 but carried by the bridge.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	return startClient(t, cfg, mcpclient.Options{Registry: reg, Elicit: true, Sample: true})
}

// answering is a client that answers every elicitation by filling each string
// property of the form with "ada", and every sampling request with
// "Paris", and records what it was asked.
type answering struct {
	mu      sync.Mutex
	methods []string
}

func (a *answering) note(method string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.methods = append(a.methods, method)
}

func (a *answering) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.methods
	a.methods = nil
	return out
}

func (a *answering) client() *mcp.Client {
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
// the default gateway (a session), the newest go-sdk client through the
// default gateway over HTTP (which serves it per request), through the
// stateless one and on a session of its own as serve --stdio has them (2026-07-28:
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
		ct, _ := serveInMemory(t, g)
		return ct
	}

	clients := []struct {
		name                string
		transport           func() mcp.Transport
		version, negotiated string
	}{
		{"2025-11-25 client, stateful gateway", overHTTP(stateful), "2025-11-25", "2025-11-25"},
		{"newest client, default gateway (served per request)", overHTTP(stateful), "", "2026-07-28"},
		{"2026-07-28 client, stateless gateway", overHTTP(stateless), "", "2026-07-28"},
		{"2026-07-28 client, stdio-like session", inMemory, "", "2026-07-28"},
	}
	const elicit, sample = "elicitation/create", "sampling/createMessage"
	calls := []struct {
		name, tool, args string
		asked            []string // sorted
		want             string
	}{
		{"old-way elicitation", "mcp__old__test_elicitation", `{"message":"Your name?"}`, []string{elicit}, "Elicitation result: action=accept, content=map[username:ada]"},
		{"old-way sampling", "mcp__old__test_sampling", `{"prompt":"Capital of France?"}`, []string{sample}, "LLM response: Paris"},
		{"input-required elicitation", "mcp__new__test_input_required_result_elicitation", `{}`, []string{elicit}, "Hello, ada!"},
		{"input-required sampling", "mcp__new__test_input_required_result_sampling", `{}`, []string{sample}, "Sampling response: Paris"},
		// Two rounds, the backend's requestState carried between them.
		{"input-required, two rounds", "mcp__new__test_input_required_result_multi_round", `{}`, []string{elicit, elicit}, "Multi-round complete: ada likes ada"},
		// Roots are the bridge's to answer (the entry's, none).
		{"input-required, three at once", "mcp__new__test_input_required_result_multiple_inputs", `{}`, []string{elicit, sample}, "Paris ada — 0 root(s) visible"},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			a := &answering{}
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
					slices.Sort(asked)
					if err != nil {
						t.Fatal(err)
					}
					if got := strings.Join(texts(res), "\n"); res.IsError || got != call.want {
						t.Errorf("got %q (isError %v), want %q", got, res.IsError, call.want)
					}
					if !slices.Equal(asked, call.asked) {
						t.Errorf("the client was asked %v, want %v", asked, call.asked)
					}
				})
			}
		})
	}
}

// startConfirmBackend starts backend "ask", a go-sdk server at protocol
// version ("" negotiates the newest) whose tool "confirm" asks its client
// whether to go on with arguments.what: in the middle of the call before
// 2026-07-28 (the returned channel then receives a value each time the
// question ends without an answer: cancelled, or failed by the bridge),
// by an input-required result from then on.
func startConfirmBackend(t *testing.T, reg *tool.Registry, version string) <-chan struct{} {
	t.Helper()
	ended := make(chan struct{}, 16)
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ What string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			question := &mcp.ElicitParams{Message: "Go on with " + args.What + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}
			if req.Session.InitializeParams().ProtocolVersion >= "2026-07-28" {
				res, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult)
				if !ok {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"ok": question}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %s %v", res.Action, args.What, res.Content["ok"])}}}, nil
			}
			res, err := req.Session.Elicit(ctx, question)
			if err != nil {
				ended <- struct{}{}
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %s %v", res.Action, args.What, res.Content["ok"])}}}, nil
		})
	startMemBackendWith(t, mcpclient.Config{ServerName: "ask", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: version},
		mcpclient.Options{Registry: reg, Elicit: true}, srv)
	return ended
}

// withAuthorization is an http.RoundTripper that sends the Authorization
// header it holds.
type withAuthorization string

func (a withAuthorization) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", string(a))
	return http.DefaultTransport.RoundTrip(r)
}

// manualSDK is a client that offers elicitation and answers
// input-required results itself (the SDK's multi round-trip middleware
// off): asked in the middle of a call, it fails t.
func manualSDK(t *testing.T) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the client was asked in the middle of a call")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
}

// manualClient connects to base+"/mcp" as a 2026-07-28 client that
// offers elicitation and answers input-required results itself (the
// SDK's multi round-trip middleware off), sending credential as its
// Authorization header.
func manualClient(t *testing.T, base, credential string) *mcp.ClientSession {
	t.Helper()
	c := manualSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: withAuthorization(credential)}}
	cs, err := c.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// askedFor calls confirm with what and returns the input-required
// result's only request key and its requestState.
func askedFor(t *testing.T, cs *mcp.ClientSession, what string) (key, state string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ask__confirm", Arguments: map[string]any{"what": what}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 || !strings.HasPrefix(res.RequestState, "mcpbridge.") {
		t.Fatalf("got %+v, want an input-required result with one request and the gateway's requestState", res)
	}
	for key, req := range res.InputRequests {
		if p, ok := req.(*mcp.ElicitParams); !ok || p.Message != "Go on with "+what+"?" {
			t.Fatalf("input request %q is %#v, want the backend's elicitation", key, req)
		}
		return key, res.RequestState
	}
	return "", ""
}

// answerWith calls confirm with what again, with answer to key and state.
func answerWith(cs *mcp.ClientSession, what, key, state string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ask__confirm", Arguments: map[string]any{"what": what}, RequestState: state,
		InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}})
}

// A requestState is good once, for the client it was given to, for the
// call it was given for: forged, altered, replayed or presented by
// another client (another credential) or for other arguments, it is
// refused with the same clear error, which says nothing of whose it is,
// and the call it names stays parked for its own client.
func TestQuestionsRequestStateAttacks(t *testing.T) {
	reg := tool.NewRegistry()
	startConfirmBackend(t, reg, "2025-11-25")
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})
	alice := manualClient(t, base, "Bearer alice")
	mallory := manualClient(t, base, "Bearer mallory")

	key, state := askedFor(t, alice, "deploy")
	refused := func(name string, cs *mcp.ClientSession, what, state string) {
		t.Helper()
		res, err := answerWith(cs, what, key, state)
		if err == nil || !strings.Contains(err.Error(), "requestState is not one this gateway holds for this call") {
			t.Errorf("%s: got %+v, %v; want the requestState refused", name, res, err)
		}
	}
	refused("forged", alice, "deploy", "mcpbridge."+strings.Repeat("A", 32))
	refused("altered", alice, "deploy", altered(state))
	refused("another client", mallory, "deploy", state)
	refused("other arguments", alice, "delete", state)

	res, err := answerWith(alice, "deploy", key, state)
	if err != nil || res.IsError || strings.Join(texts(res), "") != "accept deploy true" {
		t.Fatalf("the client's own answer: got %+v, %v; want the call completed with it", res, err)
	}
	refused("replayed", alice, "deploy", state)
}

// altered is state with its last character changed: always another
// character (appending "x" in place of the last one was no change when
// the last one was "x", one state in 64).
func altered(state string) string {
	last := byte('x')
	if state[len(state)-1] == last {
		last = 'y'
	}
	return state[:len(state)-1] + string(last)
}

// A parked call whose client never comes back is cancelled after
// Options.QuestionWait (the backend's question ends unanswered) and
// forgotten; a parked call is cancelled when its session ends (served
// stateful, as on stdio) and by Close too.
func TestQuestionsParkedCallsEnd(t *testing.T) {
	t.Run("client never comes back", func(t *testing.T) {
		reg := tool.NewRegistry()
		cancelled := startConfirmBackend(t, reg, "2025-11-25")
		g := newGateway(t, reg, Options{Stateless: true, QuestionWait: time.Millisecond})
		alice := manualClient(t, serveHTTP(t, g, Options{Stateless: true}), "")
		key, state := askedFor(t, alice, "deploy")
		waitSignal(t, cancelled, "the backend's question ended")
		waitFor(t, "no call parked", func() bool { return len(g.ParkedCalls(nil)) == 0 })
		if _, err := answerWith(alice, "deploy", key, state); err == nil || !strings.Contains(err.Error(), "requestState is not one") {
			t.Errorf("an answer after the wait: got %v, want the requestState refused", err)
		}
	})
	t.Run("session ends", func(t *testing.T) {
		reg := tool.NewRegistry()
		ended := startConfirmBackend(t, reg, "2025-11-25")
		g := newGateway(t, reg, Options{})
		c := mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, &mcp.ClientOptions{
			MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		})
		cs, s := connectClient(t, g, c, nil)
		askedFor(t, cs, "deploy")
		cs.Close()
		waitSignal(t, ended, "the backend's question ended")
		if err := s.wait(t); err != nil {
			t.Errorf("ServeTransport: %v", err)
		}
		// Its place (and the session) are given up at once, not when
		// QuestionWait passes: no one can bring its requestState back.
		waitFor(t, "the ended session's call unparked", func() bool { return len(g.ParkedCalls(nil)) == 0 })
	})
	t.Run("gateway closes", func(t *testing.T) {
		reg := tool.NewRegistry()
		cancelled := startConfirmBackend(t, reg, "2025-11-25")
		g := New(reg, Options{Stateless: true})
		alice := manualClient(t, serveHTTP(t, g, Options{Stateless: true}), "")
		askedFor(t, alice, "deploy")
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		waitSignal(t, cancelled, "the backend's question ended")
	})
}

// parkAll parks MaxParkedPerClient calls, the i-th made by clients(i), and
// checks that one call more, by clients(MaxParkedPerClient), has its
// question declined at once.
func parkAll(t *testing.T, clients func(i int) *mcp.ClientSession) {
	t.Helper()
	for i := range MaxParkedPerClient {
		askedFor(t, clients(i), fmt.Sprint("step ", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := clients(MaxParkedPerClient).CallTool(ctx, &mcp.CallToolParams{Name: "mcp__ask__confirm", Arguments: map[string]any{"what": "one more"}})
	if err != nil || res.NeedsInput() || strings.Join(texts(res), "") != "decline one more <nil>" {
		t.Errorf("one call more than MaxParkedPerClient: got %+v, %v; want its question declined", res, err)
	}
}

// byToken authenticates "Bearer <name>-<anything>" as identity name, as
// a token of name's that refreshes would be.
func byToken(r *http.Request) (string, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return "", errors.New("no token")
	}
	name, _, _ := strings.Cut(token, "-")
	return name, nil
}

// One identity parks at most MaxParkedPerClient calls, however many
// tokens it spreads them over: the backend's question of one more is
// declined at once, and another identity still parks its own. A parked
// call is bound to the identity, not the token: a client whose token
// refreshed before its retry gets its call back. (Only the stateless
// gateway parks HTTP clients' calls: the stateful one leads them to
// 2025-11-25, which is asked in the middle of the call.) The backend asks
// by input-required results: a 2025-11-25 one's question of several
// calls in flight names none of them, and the bridge declines it before
// the gateway sees it.
func TestQuestionsParkedPerIdentity(t *testing.T) {
	reg := tool.NewRegistry()
	startConfirmBackend(t, reg, "")
	opts := Options{Stateless: true, Authenticate: byToken}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	parkAll(t, func(i int) *mcp.ClientSession { return manualClient(t, base, fmt.Sprint("Bearer alice-", i)) })

	key, state := askedFor(t, manualClient(t, base, "Bearer bob-1"), "deploy")
	res, err := answerWith(manualClient(t, base, "Bearer bob-2"), "deploy", key, state)
	if err != nil || res.IsError || strings.Join(texts(res), "") != "accept deploy true" {
		t.Errorf("the retry with a refreshed token: got %+v, %v; want the call completed", res, err)
	}
}

// Without identities a stateless client is known by its address alone:
// one varying its Authorization header, which any client can, takes no
// more than MaxParkedPerClient places.
func TestQuestionsParkedPerAddress(t *testing.T) {
	reg := tool.NewRegistry()
	startConfirmBackend(t, reg, "")
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})
	parkAll(t, func(i int) *mcp.ClientSession { return manualClient(t, base, fmt.Sprint("Bearer mallory-", i)) })
}

// placeFor keys a parked call by identity when the gateway authenticates
// clients, else by session, else by address.
func TestQuestionsPlaceFor(t *testing.T) {
	session := &mcp.ServerSession{}
	for _, c := range []struct {
		name              string
		identity, address string
		session           *mcp.ServerSession
		identities        bool
		want              place
	}{
		{"identity, stateless", "alice", "10.0.0.1", nil, true, place{key: "identity alice"}},
		{"identity, stateful", "alice", "10.0.0.1", session, true, place{key: "identity alice"}},
		{"a shared token's holders: the session", "bearer", "10.0.0.1", session, false, place{session: session}},
		{"anonymous, stateless", "", "10.0.0.1", nil, true, place{key: "address 10.0.0.1"}},
		{"no authentication, stateless", "", "10.0.0.1", nil, false, place{key: "address 10.0.0.1"}},
		{"stdio", "", "", session, false, place{session: session}},
	} {
		if got := placeFor(c.identity, c.address, c.session, c.identities); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A client that answers only some of the questions is asked the others
// again, under the same keys, with a new requestState, until the call
// completes.
func TestQuestionsPartialAnswers(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "two", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "both", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, aok := req.Params.InputResponses["a"].(*mcp.ElicitResult)
			b, bok := req.Params.InputResponses["b"].(*mcp.ElicitResult)
			if aok && bok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%v %v", a.Content["v"], b.Content["v"])}}}, nil
			}
			schema := map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"a": &mcp.ElicitParams{Message: "a?", RequestedSchema: schema},
				"b": &mcp.ElicitParams{Message: "b?", RequestedSchema: schema},
			}}, nil
		})
	reg := tool.NewRegistry()
	startMemBackendWith(t, mcpclient.Config{ServerName: "two", Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg, Elicit: true}, srv)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs := manualClient(t, serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true}), "")

	params := &mcp.CallToolParams{Name: "mcp__two__both", Arguments: map[string]any{}}
	asked := map[string]string{} // message by key, over every round
	for round := 1; ; round++ {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !res.NeedsInput() {
			if got := strings.Join(texts(res), ""); got != "a? b?" {
				t.Errorf("the result is %q, want each question's own answer", got)
			}
			break
		}
		if round > 4 {
			t.Fatalf("still asked after %d rounds: %+v", round, res.InputRequests)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range res.InputRequests {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			msg := res.InputRequests[k].(*mcp.ElicitParams).Message
			if prev, ok := asked[k]; ok && prev != msg {
				t.Fatalf("key %s asked %q, then %q", k, prev, msg)
			}
			asked[k] = msg
		}
		// Only the first question is answered, with its own message.
		first := keys[0]
		params = &mcp.CallToolParams{Name: params.Name, Arguments: params.Arguments, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{first: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": asked[first]}}}}
	}
	if len(asked) != 2 {
		t.Errorf("asked %v, want both questions", asked)
	}
}

// startReportBackend starts backend "ask", whose tool "report" asks its
// client (in the middle of the call, at 2025-11-25) and, once answered,
// sends progress and a log message before its result.
func startReportBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "report", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go on?", RequestedSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
				return nil, err
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "answered"})
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "answered"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	startMemBackendWith(t, mcpclient.Config{ServerName: "ask", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25", LogLevel: "debug"},
		mcpclient.Options{Registry: reg, Elicit: true}, srv)
}

// The progress and log messages a parked call sends after its first
// round reach the stateless client on the request waiting on the call
// (its retry), under the retry's own progress token and log level; the
// first request, answered already, gets none of them.
func TestQuestionsLaterRoundsNotifications(t *testing.T) {
	reg := tool.NewRegistry()
	startReportBackend(t, reg)
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})
	var mu sync.Mutex
	var got []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			note(fmt.Sprintf("progress %v %s", req.Params.ProgressToken, req.Params.Message))
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			note(fmt.Sprintf("log %v", req.Params.Data))
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	first := &mcp.CallToolParams{Name: "mcp__ask__report", Arguments: map[string]any{}}
	first.SetProgressToken("first")
	res, err := cs.CallTool(ctx, first)
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("the first round: got %+v, %v; want the backend's question", res, err)
	}
	retry := &mcp.CallToolParams{Name: first.Name, Arguments: first.Arguments, RequestState: res.RequestState,
		Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}, InputResponses: mcp.InputResponseMap{}}
	for key := range res.InputRequests {
		retry.InputResponses[key] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}
	}
	retry.SetProgressToken("second")
	res, err = cs.CallTool(ctx, retry)
	if err != nil || strings.Join(texts(res), "") != "done" {
		t.Fatalf("the retry: got %+v, %v; want the call's result", res, err)
	}
	// In either order: the bridge hands a backend's progress and its log
	// messages over on paths of their own (mcpclient).
	want := []string{"log answered", "progress second answered"}
	told := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	waitFor(t, fmt.Sprint("the client told ", want), func() bool { return len(told()) >= len(want) })
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(told()))); diff != "" {
		t.Errorf("what the client was told (-want +got):\n%s", diff)
	}
}
