package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// waitLimit bounds the failure tests' contexts; it only decides how long a
// broken test hangs, never whether a working one passes.
const waitLimit = 60 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// echoAnswering returns a scripted raw server child (mcppeer) whose echo
// answers result.
func echoAnswering(t *testing.T, result string) childSpec {
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("echo", "echo")}}},
		Results: map[string]json.RawMessage{"echo": json.RawMessage(result)},
	}
	path, err := writeScript(t.TempDir(), "echo", script)
	if err != nil {
		t.Fatal(err)
	}
	return rawChild(self(t), path)
}

func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want one containing %q", what, err, want)
	}
}

// TestWrongAnswers checks that every caller notices a wrong echo result,
// sequentially and concurrently: no variant can get faster by doing less.
func TestWrongAnswers(t *testing.T) {
	ctx := testCtx(t)
	wrong := echoAnswering(t, `{"content":[{"type":"text","text":"wrong"}]}`)
	failed := echoAnswering(t, `{"content":[{"type":"text","text":"bad"}],"isError":true}`)
	for _, tc := range []struct {
		name  string
		start func() (caller, error)
		want  string
	}{
		{"raw go-sdk, wrong text", func() (caller, error) { return rawSDKCaller(ctx, wrong, "") }, `want text "Echo: hi"`},
		{"raw go-sdk, isError", func() (caller, error) { return rawSDKCaller(ctx, failed, "") }, "(isError true)"},
		{"bridge, wrong text", func() (caller, error) { return bridgeCaller(ctx, wrong, "") }, `echo returned "wrong"`},
		{"bridge, isError", func() (caller, error) { return bridgeCaller(ctx, failed, "") }, "echo failed: bad"},
		{"floor, wrong text", func() (caller, error) { return startFloor(wrong, false) }, "floor: unexpected reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.start()
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.seq(ctx, 1)
			wantErr(t, "seq", err, tc.want)
			_, err = c.conc(ctx, 4, 2)
			wantErr(t, "conc", err, tc.want)
			if err := c.close(); err != nil && !strings.Contains(tc.name, "floor") {
				t.Errorf("close: %v", err)
			}
		})
	}

	o, err := parseOptions([]string{"-smoke"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = runCalls(ctx, o, self(t), filepath.Join(t.TempDir(), "noresponder"), &serveSetup{}, nil, func(string, ...any) {})
	wantErr(t, "runCalls", err, "starting raw go-sdk → raw responder")
}

// TestMissingServer checks that a server that cannot start fails every
// measurement with the reason, and leaves nothing running.
func TestMissingServer(t *testing.T) {
	ctx := testCtx(t)
	missing := childSpec{exe: filepath.Join(t.TempDir(), "nosuchserver")}
	_, err := rawSDKCaller(ctx, missing, "")
	wantErr(t, "raw go-sdk", err, "raw go-sdk: connecting to nosuchserver")
	_, err = bridgeCaller(ctx, missing, "")
	wantErr(t, "bridge", err, `bridge: connecting server "bench" to nosuchserver`)
	_, err = startFloor(missing, false)
	wantErr(t, "floor", err, "floor: starting /")
	_, err = startFloor(childSpec{exe: "/bin/true"}, true)
	wantErr(t, "floor to a server that exits", err, "floor: initializing true: ") // EOF or a broken pipe, by timing
	_, err = bridgeStartup(ctx, missing, 2, 1)
	wantErr(t, "bridge startup", err, "server 0:")
	_, err = rawStartup(ctx, missing, 2, 1)
	wantErr(t, "raw startup", err, "connecting to nosuchserver")
	_, err = floorStartup(missing, 2, 1)
	wantErr(t, "floor startup", err, "process floor: starting /")
	res := &catalogResults{}
	wantErr(t, "bridge catalog", bridgeCatalogRound(ctx, missing, nil, res), "bridge: connecting")
	wantErr(t, "raw catalog", rawCatalogRound(ctx, missing, 1, res), "raw go-sdk: connecting")

	o, err := parseOptions([]string{"-smoke", "-profile", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	nolog := func(string, ...any) {}
	_, err = runCalls(ctx, o, missing.exe, "", &serveSetup{}, nil, nolog)
	wantErr(t, "call rows", err, "starting raw go-sdk → go-sdk fixture")
	_, err = runStartup(ctx, o, missing.exe, nolog)
	wantErr(t, "startup row", err, "bridge startup of 1 servers")
	_, err = runMemory(ctx, o, missing.exe, nolog)
	wantErr(t, "memory row", err, "memory probe (raw, 2 servers)")
	wantErr(t, "profile", profile(ctx, o, missing.exe, missing.exe, "", nolog), "bridge: connecting")
}

// TestWrongToolCounts checks the startup and catalog rounds' own checks.
func TestWrongToolCounts(t *testing.T) {
	ctx := testCtx(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	responder, err := buildResponder(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := responderChild(responder, 0, 2)
	_, err = bridgeStartup(ctx, spec, 1, 3)
	wantErr(t, "bridge startup", err, "2 tools registered, want 3")
	_, err = rawStartup(ctx, spec, 1, 3)
	wantErr(t, "raw startup", err, "2 tools listed, want 3")
	_, err = floorStartup(spec, 1, 3)
	wantErr(t, "floor startup", err, "2 tools listed, want 3")

	defs := catalogDefs(3)
	path, err := writeScript(t.TempDir(), "catalog", catalogScript(defs, 2))
	if err != nil {
		t.Fatal(err)
	}
	cat := rawChild(self(t), path)
	res := &catalogResults{}
	wantErr(t, "raw catalog", rawCatalogRound(ctx, cat, 4, res), "3 tools listed, want 4")
	wantErr(t, "bridge catalog", bridgeCatalogRound(ctx, cat, catalogDefs(4), res), "after discovery: 3 tools registered, want 4")
}

func TestSameDefinitions(t *testing.T) {
	defs := catalogDefs(2)
	good := func() []tool.Tool {
		var out []tool.Tool
		for _, d := range defs {
			out = append(out, tool.Tool{Name: mcpclient.PublicToolName(catalogServer, d.name), Description: d.description, InputSchema: d.inputSchema, OutputSchema: d.outputSchema})
		}
		return out
	}
	if err := sameAsServer(good(), defs); err != nil {
		t.Fatalf("identical definitions: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(ts []tool.Tool)
		want   string
	}{
		{"renamed", func(ts []tool.Tool) { ts[1].Name = "x" }, "is not registered"},
		{"description", func(ts []tool.Tool) { ts[1].Description = "x" }, "description"},
		{"input schema", func(ts []tool.Tool) { ts[1].InputSchema = json.RawMessage(`{ }`) }, "inputSchema"},
		{"output schema", func(ts []tool.Tool) { ts[1].OutputSchema = json.RawMessage(`{}`) }, "outputSchema"},
	} {
		ts := good()
		tc.change(ts)
		wantErr(t, tc.name, sameAsServer(ts, defs), tc.want)
		wantErr(t, tc.name, sameDefinitions(good(), ts), "tool 1 differs")
	}
	wantErr(t, "count", sameAsServer(good()[:1], defs), "1 tools registered, want 2")
	wantErr(t, "count", sameDefinitions(good()[:1], good()), "1 tools before, 2 after")
}

// TestMemProbe runs the memory probe in process, both modes, one server.
func TestMemProbe(t *testing.T) {
	ctx := testCtx(t)
	for _, mode := range []string{"raw", "bridge"} {
		var out bytes.Buffer
		if err := memProbe(ctx, fixtureChild(self(t)), mode, 1, &out); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var rep memReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v in %q", mode, err, out.String())
		}
		if rep.Servers != 1 || rep.After.Goroutines <= rep.Before.Goroutines || rep.After.RSS == 0 {
			t.Errorf("%s: implausible report %+v", mode, rep)
		}
	}
	missing := childSpec{exe: filepath.Join(t.TempDir(), "nosuchserver")}
	for _, mode := range []string{"raw", "bridge"} {
		wantErr(t, mode+" probe of a missing server", memProbe(ctx, missing, mode, 2, io.Discard), "nosuchserver")
	}
	_, err := runMemProbe(ctx, "/bin/true", "raw", 1)
	wantErr(t, "silent probe", err, "bad report")
	_, err = runMemProbe(ctx, filepath.Join(t.TempDir(), "nosuch"), "raw", 1)
	wantErr(t, "missing probe", err, "memory probe (raw, 1 servers)")
	_, err = runMemProbe(ctx, "/bin/echo", "raw", 1) // prints a newline: not JSON either
	wantErr(t, "echo probe", err, "bad report")
}

func TestNodeFailures(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, err = findNode(t.TempDir(), "")
	wantErr(t, "no SDK", err, "the Node TS SDK is not installed")
	if v := (nodeSetup{bin: filepath.Join(t.TempDir(), "nonode")}).version(); !strings.HasPrefix(v, "unknown") {
		t.Errorf("version of a missing node: %q", v)
	}
	n, err := findNode(root, "")
	if err != nil {
		t.Skipf("Node is not installed: %v", err)
	}
	bad := n
	bad.nodeModules = t.TempDir()
	_, err = startNode(bad, fixtureChild(self(t)))
	wantErr(t, "no SDK below node_modules", err, "node client:")
	bad = n
	bad.script = filepath.Join(t.TempDir(), "nosuch.mjs")
	_, err = startNode(bad, fixtureChild(self(t)))
	wantErr(t, "missing script", err, "node client: reading its reply")

	ctx := testCtx(t)
	c, err := startNode(n, echoAnswering(t, `{"content":[{"type":"text","text":"wrong"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.seq(ctx, 1)
	wantErr(t, "seq", err, "echo returned")
	_, err = c.conc(ctx, 2, 2)
	wantErr(t, "conc", err, "echo returned")
	_, err = c.do(`{"op":"bogus"}`)
	wantErr(t, "unknown op", err, `unknown op "bogus"`)
	if err := c.close(); err != nil {
		t.Errorf("close: %v", err)
	}
	_, err = c.do(`{"op":"seq","n":1}`)
	wantErr(t, "after close", err, "node client: sending a command")
}

func TestSetupFailures(t *testing.T) {
	_, err := writeScript(filepath.Join(t.TempDir(), "nosuchdir"), "x", mcppeer.RawScript{})
	wantErr(t, "writeScript", err, "writing the raw script")
	_, err = buildResponder(t.TempDir(), t.TempDir())
	wantErr(t, "buildResponder outside the module", err, "building ./bench/responder")
	if got := readFirstLine(filepath.Join(t.TempDir(), "nosuch"), "x"); got != "" {
		t.Errorf("readFirstLine of a missing file = %q", got)
	}
	if got := readFirstLine("/proc/self/status", "NoSuchKey"); got != "" {
		t.Errorf("readFirstLine of a missing key = %q", got)
	}
	if s := (childSpec{exe: "/x/y", env: map[string]string{mcppeer.ChildEnv: "raw"}}).String(); s != "the raw child" {
		t.Errorf("String = %q", s)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := options{profileDir: filepath.Join(file, "prof")}
	wantErr(t, "profile below a file", profile(testCtx(t), o, self(t), "", "", func(string, ...any) {}), "creating the profile directory")

	t.Chdir(t.TempDir())
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-q"}, &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "run the benchmarks from inside the mcpbridge module") {
		t.Errorf("outside the module: exit %d, %q", code, stderr.String())
	}
}

func TestGatewayAndHostFailures(t *testing.T) {
	ctx := testCtx(t)
	missing := childSpec{exe: filepath.Join(t.TempDir(), "nosuchserver")}
	_, err := gatewayCaller(ctx, missing, false)
	wantErr(t, "gateway to a missing server", err, `bridge: connecting server "bench"`)
	wrong := echoAnswering(t, `{"content":[{"type":"text","text":"wrong"}]}`)
	for _, overHTTP := range []bool{false, true} {
		c, err := gatewayCaller(ctx, wrong, overHTTP)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.seq(ctx, 1)
		wantErr(t, "gateway seq", err, `want text "Echo: hi"`)
		if err := c.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	for _, tc := range []struct {
		res  *mcp.CallToolResult
		want bool
	}{
		{&mcp.CallToolResult{}, false},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{}}}, false},
		{&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, true},
	} {
		if _, ok := firstText(tc.res); ok != tc.want {
			t.Errorf("firstText(%+v) ok = %v, want %v", tc.res.Content, ok, tc.want)
		}
	}

	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	responder, err := buildResponder(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = hostStartup(ctx, responderChild(responder, 0, 2), 2, 3)
	wantErr(t, "host startup", err, "4 tools registered, want 6")
}

func TestServeFailures(t *testing.T) {
	ctx := testCtx(t)
	missing := serveSetup{mcpbridge: filepath.Join(t.TempDir(), "nomcpbridge"), config: "x.yaml"}
	_, err := serveCaller(ctx, missing, false)
	wantErr(t, "serve --stdio", err, "connecting to mcpbridge serve")
	_, err = serveCaller(ctx, missing, true)
	wantErr(t, "serve --http", err, "serve --http: starting")
	_, err = newServeSetup(t.TempDir(), t.TempDir(), childSpec{})
	wantErr(t, "serve setup outside the module", err, "building ./cmd/mcpbridge")
	// A process that exits at once: never healthy.
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := stopProcess(cmd); err != nil {
		t.Errorf("stopProcess of an exited process: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	wantErr(t, "awaitHealthy", awaitHealthy(short, "http://127.0.0.1:1/healthz", time.Minute), "context deadline exceeded")
	wantErr(t, "awaitHealthy", awaitHealthy(ctx, "http://127.0.0.1:1/healthz", 0), "not healthy within 0s")

	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// A backend that never starts: serve never becomes ready.
	down, err := newServeSetup(root, t.TempDir(), childSpec{exe: filepath.Join(t.TempDir(), "nosuchserver")})
	if err != nil {
		t.Fatal(err)
	}
	down.wait = 300 * time.Millisecond
	_, err = serveCaller(ctx, down, false)
	wantErr(t, "serve --stdio without its backend", err, `tool "mcp__bench__echo" not listed within 300ms`)
	_, err = serveCaller(ctx, down, true)
	wantErr(t, "serve --http without its backend", err, "not healthy within 300ms")
	// A backend that answers wrong: every call says so.
	wrong, err := serveConfig(down.mcpbridge, t.TempDir(), echoAnswering(t, `{"content":[{"type":"text","text":"wrong"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, overHTTP := range []bool{false, true} {
		c, err := serveCaller(ctx, wrong, overHTTP)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.seq(ctx, 1)
		wantErr(t, "serve seq", err, `want text "Echo: hi"`)
		if err := c.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}
