package gatewayauth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// served is a gateway over real HTTP on 127.0.0.1 with a Keeper in front,
// and a registry of Go tools that count their calls.
type served struct {
	is     *mcptest.Issuer
	gw     *gateway.Gateway
	srv    *httptest.Server
	keeper *Keeper
	reg    *tool.Registry
	ran    map[string]*atomic.Int32
	logs   *syncBuffer
	dir    string
}

// syncBuffer is a log sink tests read while the gateway writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servedTools = []tool.Tool{
	{Name: "mcp__github__get_issue", Origin: tool.Origin{Server: "github", Name: "get_issue"}},
	{Name: "mcp__github__delete_repo", Origin: tool.Origin{Server: "github", Name: "delete_repo"}},
	{Name: "mcp__time__now", Origin: tool.Origin{Server: "time", Name: "now"}},
}

// newServed starts the gateway; apply gives it a config.
func newServed(t *testing.T, o Options) *served {
	t.Helper()
	return newServedWith(t, o, false)
}

// newServedWith is newServed, the gateway serving each POST on a session
// of its own when stateless.
func newServedWith(t *testing.T, o Options, stateless bool) *served {
	t.Helper()
	s := &served{is: mcptest.NewIssuer(t), ran: map[string]*atomic.Int32{}, logs: &syncBuffer{}, dir: t.TempDir()}
	reg := tool.NewRegistry()
	s.reg = reg
	for _, tl := range servedTools {
		n := &atomic.Int32{}
		s.ran[tl.Name] = n
		tl.Description = "test tool"
		tl.InputSchema = json.RawMessage(`{"type":"object"}`)
		tl.Execute = func(context.Context, json.RawMessage) (tool.Output, error) {
			n.Add(1)
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		}
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(s.logs, nil))
	o.Logger = log
	o.Changed = func() {
		if s.gw != nil {
			s.gw.Rescreen()
		}
	}
	s.keeper = NewKeeper(o)
	s.gw = gateway.New(reg, gateway.Options{Logger: log, Stateless: stateless, Gate: s.keeper, Authenticate: s.keeper.Authenticate, WellKnown: s.keeper.WellKnown()})
	s.srv = httptest.NewServer(s.gw.Handler())
	t.Cleanup(func() {
		s.srv.Close()
		s.gw.Close()
		s.keeper.Clear(s.keeper.Current())
	})
	return s
}

func (s *served) resource() string { return s.srv.URL + "/mcp" }

// config decodes a gateway entry's config; ISSUER and RESOURCE and DIR
// are replaced by the test's.
func (s *served) config(t *testing.T, src string, env map[string]string) Config {
	t.Helper()
	src = strings.NewReplacer("ISSUER", s.is.URL(), "RESOURCE", s.resource(), "DIR", s.dir).Replace(src)
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	cfg, err := Decode(n.Content[0], func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return cfg
}

func (s *served) apply(t *testing.T, src string, env map[string]string) {
	t.Helper()
	if err := s.keeper.Apply(t.Context(), s.config(t, src, env), s.reg); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens an MCP session with token; notified, when not nil, gets
// each tools list_changed.
func (s *served) connect(t *testing.T, token string, notified chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if notified != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case notified <- struct{}{}:
			default:
			}
		}
	}
	return s.connectWith(t, token, opts)
}

// connectWith opens an MCP session with token and the client's opts.
func (s *served) connectWith(t *testing.T, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: s.resource(), HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// callCode calls name and returns the JSON-RPC error code, 0 for a result.
func callCode(t *testing.T, cs *mcp.ClientSession, name string) (int64, error) {
	t.Helper()
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"repo": "x", "secret": "s3cret"}})
	if err == nil {
		return 0, nil
	}
	if we, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return we.Code, err
	}
	t.Fatalf("tools/call %s: %T %#v", name, err, err)
	return 0, err
}

// checkHidden checks that cs's call of name, which the policy denies, is
// answered exactly as a call of a tool that does not exist: the caller
// learns nothing of a tool hidden from it.
func checkHidden(t *testing.T, cs *mcp.ClientSession, name string) {
	t.Helper()
	code, err := callCode(t, cs, name)
	missingCode, missing := callCode(t, cs, "mcp__nowhere__nothing")
	if err == nil || missing == nil || code != missingCode ||
		err.Error() != strings.ReplaceAll(missing.Error(), "mcp__nowhere__nothing", name) {
		t.Errorf("the denied call of %s: %d %v; want it answered as a tool that does not exist: %d %v", name, code, err, missingCode, missing)
	}
}

// checkOffersHidden has cs get the prompt and read the resource the
// policy denies it, and wants each answered exactly as one that does not
// exist: code, message (but for the name) and data, so nobody learns
// what the policy hides from them.
func checkOffersHidden(t *testing.T, cs *mcp.ClientSession, prompt, uri string) {
	t.Helper()
	get := func(name string) error {
		return second(cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: name}))
	}
	read := func(uri string) error {
		return second(cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}))
	}
	for _, c := range []struct {
		what, name, missing string
		ask                 func(string) error
	}{
		{"prompt", prompt, "mcp__nowhere__nothing", get},
		{"resource", uri, "nowhere://nothing", read},
	} {
		denied, missing := c.ask(c.name), c.ask(c.missing)
		dw, ok1 := errors.AsType[*jsonrpc.Error](denied)
		mw, ok2 := errors.AsType[*jsonrpc.Error](missing)
		if !ok1 || !ok2 || dw.Code != mw.Code || dw.Message != strings.ReplaceAll(mw.Message, c.missing, c.name) ||
			string(dw.Data) != strings.ReplaceAll(string(mw.Data), c.missing, c.name) {
			t.Errorf("the denied %s %s: %v; want it answered as one that does not exist: %v", c.what, c.name, denied, missing)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func auditPath(s *served) string { return filepath.Join(s.dir, "audit.jsonl") }

// auditLines decodes each line of s's audit trail as a T.
func auditLines[T any](t *testing.T, s *served) []T {
	t.Helper()
	var out []T
	for sc := bufio.NewScanner(strings.NewReader(readFile(t, auditPath(s)))); sc.Scan(); {
		var l T
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}
