package gateway

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// stdioChildEnv makes the test binary a gateway on its stdin/stdout, in
// front of two in-process fixture backends a and b (see TestMain).
const stdioChildEnv = "GATEWAY_TEST_STDIO_CHILD"

// runStdioChild serves the gateway on stdio until stdin closes and returns
// the exit status.
func runStdioChild() int {
	reg := tool.NewRegistry()
	var closers []func()
	defer func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}()
	for _, name := range []string{"a", "b"} {
		fixture := mcppeer.Fixture(mcppeer.FixtureOptions{})
		cfg := mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused"}
		srv, err := mcpclient.Start(cfg, mcpclient.Options{Registry: reg, NewTransport: func() (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := fixture.Connect(context.Background(), st, nil)
			if err == nil {
				closers = append(closers, func() { ss.Close() })
			}
			return ct, err
		}})
		if err != nil {
			os.Stderr.WriteString("stdio child: " + err.Error() + "\n")
			return 1
		}
		closers = append(closers, func() { srv.Close() })
		if err := srv.WaitReady(context.Background()); err != nil {
			os.Stderr.WriteString("stdio child: " + err.Error() + "\n")
			return 1
		}
	}
	g := New(reg, Options{})
	closers = append(closers, func() { g.Close() })
	if err := g.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		os.Stderr.WriteString("stdio child: " + err.Error() + "\n")
		return 1
	}
	return 0
}

// nodeResult is what testdata/node_client.mjs prints.
type nodeResult struct {
	Server     mcp.Implementation `json:"server"`
	Tools      []string           `json:"tools"`
	GreetA     nodeCall           `json:"greetA"`
	GreetB     nodeCall           `json:"greetB"`
	Image      nodeCall           `json:"image"`
	Structured nodeCall           `json:"structured"`
	Fail       nodeCall           `json:"fail"`
	ToolsAfter []string           `json:"toolsAfter"`
}

type nodeCall struct {
	IsError           bool              `json:"isError"`
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
}

// The real TypeScript SDK client lists and calls the tools of two backends
// through the gateway over Streamable HTTP and over stdio, and receives
// list_changed when a backend's tools change.
func TestNodeClient(t *testing.T) {
	run := func(t *testing.T, env []string, args ...string) nodeResult {
		var res nodeResult
		runNodeClient(t, &res, env, args...)
		return res
	}
	check := func(t *testing.T, res nodeResult) {
		t.Helper()
		if res.Server.Name != "mcpbridge" {
			t.Errorf("server info %+v", res.Server)
		}
		want := publicNames([]string{"a", "b"}, mcppeer.FixtureTools())
		if diff := cmp.Diff(want, res.Tools); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		calls := []struct {
			name string
			call nodeCall
			want string
		}{
			{"greetA", res.GreetA, `[{"type":"text","text":"Hello, Node!"}]`},
			{"greetB", res.GreetB, `[{"type":"text","text":"Hello, Deno!"}]`},
			{"image", res.Image, `[{"type":"text","text":"Here is an image:"},{"type":"image","data":"` + mcppeer.TinyPNG + `","mimeType":"image/png"},{"type":"text","text":"End of image."}]`},
			{"structured", res.Structured, `[{"type":"text","text":"42"}]`},
			{"fail", res.Fail, `[{"type":"text","text":"Something went wrong"}]`},
		}
		for _, c := range calls {
			got, _ := json.Marshal(c.call.Content)
			if diff := cmp.Diff(decodeString(t, c.want), decode(t, got)); diff != "" {
				t.Errorf("%s content (-want +got):\n%s", c.name, diff)
			}
			if c.call.IsError != (c.name == "fail") {
				t.Errorf("%s: isError %v", c.name, c.call.IsError)
			}
		}
		if string(res.Structured.StructuredContent) != `{"answer":42}` {
			t.Errorf("structuredContent %s", res.Structured.StructuredContent)
		}
		if !slices.Contains(res.ToolsAfter, "mcp__a__from_node") {
			t.Errorf("after list_changed the tools lack mcp__a__from_node: %v", res.ToolsAfter)
		}
	}

	t.Run("http", func(t *testing.T) {
		_, g, _ := twoBackends(t, Options{BearerToken: "node-token"})
		base := serveHTTP(t, g, Options{BearerToken: "node-token"})
		check(t, run(t, []string{"GATEWAY_TOKEN=node-token"}, "http", base+"/mcp"))
	})
	t.Run("stdio", func(t *testing.T) {
		check(t, run(t, []string{stdioChildEnv + "=1"}, "stdio", os.Args[0]))
	})
}

func decodeString(t *testing.T, s string) any { return decode(t, []byte(s)) }

// runNodeClient runs testdata/node_client.mjs with args and env, and
// decodes what it prints into v.
func runNodeClient(t *testing.T, v any, env []string, args ...string) {
	t.Helper()
	node := mcptest.ThirdPartyBin(t, "node")
	script, err := filepath.Abs(filepath.Join("testdata", "node_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), append(env, "NODE_MODULES="+filepath.Dir(filepath.Dir(node)))...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
}
