package gatewayrun_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/tool"
)

// echoKind's instances serve one Go tool, mcp__echo__say, counting its runs.
type echoKind struct{ ran *atomic.Int32 }

func (echoKind) Name() string { return "echo" }
func (echoKind) Decode(*yaml.Node, func(string) (string, bool)) (host.Spec, error) {
	return host.Spec{Config: struct{}{}, Name: "echo", StartupTimeout: time.Minute}, nil
}
func (k echoKind) Start(_ context.Context, _ host.Spec, env host.Env) (host.Instance, error) {
	err := env.Tools.Publish(tool.Tool{Name: "mcp__echo__say", Description: "says done", InputSchema: json.RawMessage(`{"type":"object"}`),
		Origin: tool.Origin{Server: "echo", Name: "say"},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			k.ran.Add(1)
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		}})
	return echoInstance{}, err
}

type echoInstance struct{}

func (echoInstance) Ready() <-chan struct{} { c := make(chan struct{}); close(c); return c }
func (echoInstance) StartErr() error        { return nil }
func (echoInstance) Close() error           { return nil }
func (echoInstance) Status() host.Status    { return host.Status{State: host.StateReady} }

// An audited serve whose trail cannot be written serves no call and
// says so at /readyz, so that a balancer sends its calls elsewhere; once
// the trail can be written again it is ready and serves, with no call
// needed to find out. The trail's directory removed, then a directory
// put where the file was: /readyz said 200 throughout, and the calls
// were answered, their lines written to the removed file, which no one
// can read.
func TestUnwritableTrailNotReady(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	trail := filepath.Join(dir, "audit.jsonl")
	var ran atomic.Int32
	src := "- {id: gw, name: gateway, config: {auth: {tokens: {ci: CI_TOKEN}}, audit: {file: " + trail + "}}}\n- {id: e, name: echo}\n"
	read := func(c *host.Catalog) (*host.Plan, error) {
		return c.ParseIsolated("f.yaml", []byte(src), func(string) (string, bool) { return "tok", true })
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	cfg := config("", nil, pw)
	cfg.Catalog = func(k *gatewayauth.Keeper) *host.Catalog {
		return host.NewCatalog(gatewaykind.NewKind(k), echoKind{&ran})
	}
	cfg.Load = func(c *host.Catalog) (gatewayrun.Source, error) {
		plan, err := read(c)
		return gatewayrun.Source{Plan: plan}, err
	}
	cfg.Reload, cfg.Stdio, cfg.HTTPAddr = read, false, "127.0.0.1:0"
	endpoint, stop := runHTTP(t, cfg, pr)
	defer stop()
	ctx := t.Context()
	readyz := strings.Replace(endpoint, "/mcp", "/readyz", 1)
	probe := func() (int, string) {
		resp, err := (&http.Client{Transport: bearer{"tok"}}).Get(readyz) // the probes share /mcp's checks
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h struct{ Refusing string }
		json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h.Refusing
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ops", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{"tok"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func() error {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__echo__say", Arguments: map[string]any{}})
		return err
	}
	if code, why := probe(); code != http.StatusOK {
		t.Fatalf("/readyz with the trail writable: %d %q", code, why)
	}
	if err := call(); err != nil {
		t.Fatalf("a call with the trail writable: %v", err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, "the trail's directory removed", probe, call, trail)
	if err := os.MkdirAll(trail, 0o700); err != nil { // a directory where the file was
		t.Fatal(err)
	}
	wantRefused(t, "a directory in the trail's place", probe, call, "is a directory")
	if n := ran.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once: a call the trail cannot record must not run", n)
	}

	if err := os.Remove(trail); err != nil {
		t.Fatal(err)
	}
	if code, why := probe(); code != http.StatusOK {
		t.Errorf("/readyz once the trail can be written again: %d %q, want 200", code, why)
	}
	if err := call(); err != nil {
		t.Errorf("a call once the trail can be written again: %v", err)
	}
	data, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"name":"mcp__echo__say","server":"echo","outcome":"ok"`) {
		t.Errorf("the trail made again lacks the call:\n%s", data)
	}
	// Its first lines went with the removed directory: it begins
	// mid-chain, and is a chain from there.
	var chain audit.Chain
	if _, err := chain.Continue(strings.NewReader(string(data))); err != nil || chain.Start == audit.Genesis {
		t.Errorf("the trail made again: %v, first prev %s; want a chain going on from the removed file's", err, chain.Start)
	}
}

// wantRefused checks that /readyz says 503, with why naming the trail's
// failure, and that a call is refused as unaudited.
func wantRefused(t *testing.T, what string, probe func() (int, string), call func() error, why string) {
	t.Helper()
	if code, refusing := probe(); code != http.StatusServiceUnavailable || !strings.Contains(refusing, "cannot write its audit trail") || !strings.Contains(refusing, why) {
		t.Errorf("%s: /readyz %d %q, want 503 saying the trail cannot be written (%s)", what, code, refusing, why)
	}
	err := call()
	if we, ok := errors.AsType[*jsonrpc.Error](err); !ok || we.Code != gatewayauth.CodeUnaudited {
		t.Errorf("%s: a call: %v, want code %d", what, err, gatewayauth.CodeUnaudited)
	}
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// runHTTP runs cfg's serve over HTTP, its lines written to the pipe pr
// reads, and returns the MCP endpoint once a line says it is served
// there (a gateway entry's run first says it is starting), and stop,
// which ends the run and checks it ended well.
func runHTTP(t *testing.T, cfg gatewayrun.Config, pr *io.PipeReader) (endpoint string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gatewayrun.Run(ctx, cfg) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	lines := bufio.NewReader(pr)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			stop()
			t.Fatalf("no line says serve serves MCP: %v", err)
		}
		if _, url, found := strings.Cut(strings.TrimSpace(line), "serving MCP on "); found {
			go io.Copy(io.Discard, lines)
			return strings.Fields(url)[0], stop
		}
	}
}
