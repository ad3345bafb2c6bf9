//lint:file-ignore SA1019 the test server and client use roots, deprecated as of MCP 2026-07-28 but carried by the bridge.

package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// docServer is a go-sdk backend offering resources and a prompt.
func docServer(uris ...string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	for _, uri := range uris {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, docReader)
	}
	srv.AddPrompt(&mcp.Prompt{Name: "summarize"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize."}}}}, nil
	})
	return srv
}

func docReader(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "text of " + req.Params.URI}}}, nil
}

// startDocBackend runs srv as the backend server name of reg.
func startDocBackend(t *testing.T, reg *tool.Registry, name string, srv *mcp.Server) {
	t.Helper()
	startMemBackend(t, reg, mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused"}, srv)
}

func (c *client) resourceURIs(t *testing.T) []string {
	t.Helper()
	var out []string
	for r, err := range c.session.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.URI)
	}
	return out
}

// Two backends offering resources: a URI both offer is served from the
// first in config order (the log says which was left out), reads are
// routed to the owner, prompts keep public names, and a backend's change
// reaches the client as resources/list_changed.
func TestGatewayResources(t *testing.T) {
	reg := tool.NewRegistry()
	first, second := docServer("doc://shared", "doc://a"), docServer("doc://shared", "doc://b")
	startDocBackend(t, reg, "zeta", first)
	startDocBackend(t, reg, "alpha", second)
	log := mcptest.NewLog()
	g := newGateway(t, reg, Options{Logger: log.Logger(), ServerOrder: func() []string { return []string{"zeta", "alpha"} }})
	c := connectInMemory(t, g)
	ctx := context.Background()

	if got, want := c.resourceURIs(t), []string{"doc://a", "doc://b", "doc://shared"}; !slices.Equal(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
	}
	if !log.HasRecord(slog.LevelWarn, "resource not served: another server offers the same and comes first in the config", "server", "alpha", "served_from", "zeta") {
		t.Errorf("no record of the shadowed URI; log:\n%s", log.Text())
	}
	for uri, want := range map[string]string{"doc://b": "text of doc://b", "doc://shared": "text of doc://shared"} {
		res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != want {
			t.Errorf("read %s = %+v, %v", uri, res, err)
		}
	}
	if _, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "doc://none"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("read of an unlisted URI: %v", err)
	}
	prompts, err := c.session.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 2 || prompts.Prompts[0].Name != "mcp__alpha__summarize" {
		t.Fatalf("prompts = %+v, %v", prompts, err)
	}
	got, err := c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__zeta__summarize"})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "Summarize." {
		t.Errorf("get prompt = %+v, %v", got, err)
	}
	caps := c.session.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions != nil {
		t.Errorf("capabilities = %+v: want resources and prompts (list_changed), no subscribe, no completions", caps)
	}

	second.AddResource(&mcp.Resource{URI: "doc://late", Name: "late"}, docReader)
	waitSignalValue(t, c.otherChanged, "resources")
	waitFor(t, "doc://late listed", func() bool { return slices.Contains(c.resourceURIs(t), "doc://late") })
	first.RemovePrompts("summarize")
	waitSignalValue(t, c.otherChanged, "prompts")
}

// waitSignalValue waits until ch delivers want.
func waitSignalValue(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	for {
		if waitSignal(t, ch, want+" list_changed") == want {
			return
		}
	}
}

// A gateway with tool-only backends advertises no resources, prompts or
// completion once ready, and all of them before (it cannot know yet).
func TestGatewayCapabilitiesFollowBackends(t *testing.T) {
	reg := tool.NewRegistry()
	startBackend(t, reg, "a", mcppeer.FixtureOptions{})
	c := connectInMemory(t, newGateway(t, reg, Options{}))
	if caps := c.session.InitializeResult().Capabilities; caps.Resources != nil || caps.Prompts != nil || caps.Completions != nil || caps.Tools == nil {
		t.Errorf("ready, tools only: capabilities = %+v", caps)
	}
	never := make(chan struct{})
	c = connectInMemory(t, newGateway(t, reg, Options{Ready: never}))
	if caps := c.session.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil {
		t.Errorf("not ready yet: capabilities = %+v, want everything", caps)
	}
}

// The real TypeScript SDK client sees server-everything's 7 resources, 2
// templates and 4 prompts through the gateway, reads a templated resource
// and renders a prompt with arguments.
func TestNodeClientResources(t *testing.T) {
	node := mcptest.ThirdPartyBin(t, "node")
	everything := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	reg := tool.NewRegistry()
	cfg := mcpclient.Config{ServerName: "everything", Transport: mcpclient.TransportStdio, Command: everything, Args: []string{"stdio"}}
	startClient(t, cfg, mcpclient.Options{Registry: reg})
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	base := serveHTTP(t, newGateway(t, reg, Options{}), Options{})
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "node_resources.mjs"), base+"/mcp")
	cmd.Env = append(os.Environ(), "NODE_MODULES="+filepath.Dir(filepath.Dir(node)))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
	}
	var seen struct {
		Capabilities map[string]json.RawMessage
		Resources    []string
		Templates    []string
		Prompts      []string
		Templated    []string
		Prompt       []string
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	if len(seen.Resources) != 7 || len(seen.Templates) != 2 || len(seen.Prompts) != 4 {
		t.Errorf("saw %d resources, %d templates, %d prompts; want 7, 2, 4: %+v", len(seen.Resources), len(seen.Templates), len(seen.Prompts), seen)
	}
	if len(seen.Templated) != 1 || !strings.HasPrefix(seen.Templated[0], "Resource 4:") {
		t.Errorf("templated read = %q", seen.Templated)
	}
	if len(seen.Prompt) != 1 || !strings.Contains(seen.Prompt[0], "Lyon") || !strings.HasPrefix(seen.Prompt[0], "user: ") {
		t.Errorf("prompt = %q", seen.Prompt)
	}
	for _, c := range []string{"resources", "prompts", "completions", "tools"} {
		if seen.Capabilities[c] == nil {
			t.Errorf("capabilities %v lack %s", seen.Capabilities, c)
		}
	}
}

// A backend's roots/list in the middle of a call is answered with the
// roots of the client that made the call only when its entry says roots:
// client (none without a client); any other entry gets its configured
// roots, whatever the client offers: a client never widens a server.
func TestGatewayPassesClientRoots(t *testing.T) {
	for _, c := range []struct {
		name           string
		cfg            func(*mcpclient.Config)
		viaGW, withOut string
	}{
		{"roots: client", func(c *mcpclient.Config) { c.RootsFromClient = true }, "file:///from-client", ""},
		{"roots: [paths]", func(c *mcpclient.Config) { c.Roots = []string{"/configured"} }, "file:///configured", "file:///configured"},
		{"no roots", func(*mcpclient.Config) {}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := mcpclient.Config{ServerName: "rooted", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25"}
			c.cfg(&cfg)
			viaGW, withOut := rootsSeen(t, cfg)
			if viaGW != c.viaGW || withOut != c.withOut {
				t.Errorf("roots through the gateway %q, without a client %q; want %q, %q", viaGW, withOut, c.viaGW, c.withOut)
			}
		})
	}
}

// rootsSeen returns the roots a backend of cfg lists in the middle of a
// call, made by a gateway's client offering file:///from-client and
// directly on the registry.
func rootsSeen(t *testing.T, cfg mcpclient.Config) (viaGW, withOut string) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rooted", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, " ")}}}, nil
		})
	reg := tool.NewRegistry()
	startMemBackend(t, reg, cfg, srv)
	ctx := context.Background()
	g := newGateway(t, reg, Options{})
	client := mcp.NewClient(&mcp.Implementation{Name: "rooted-client", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///from-client", Name: "client"})
	// 2025-11-25: on 2026-07-28 a server cannot ask its client mid-call.
	cs, _ := connectClient(t, g, client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__rooted__roots", Arguments: map[string]any{}})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("through the gateway: %+v, %v", res, err)
	}
	direct, err := reg.Execute(ctx, "mcp__rooted__roots", nil)
	if err != nil {
		t.Fatalf("without a client: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text, direct.Text()
}
