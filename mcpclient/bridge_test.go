package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

const imageDiag = "[image unavailable: image/png; no attachment store is mounted; raw image data remains available to programmatic callers]"

func fixtureHarness(t *testing.T, opts mcppeer.FixtureOptions) (*harness, *mcp.Server, *wireRecorder) {
	t.Helper()
	srv := mcppeer.Fixture(opts)
	rec := newWireRecorder(srv)
	h := mustStart(t, stdioConfig("fixture"), Options{NewTransport: inMemory(t, srv)})
	return h, srv, rec
}

// docs/upstream.md §8.4 cases 102–103 and §8.1 case 7: discovery under the namespace.
func TestDiscoveryRegistersPublicNames(t *testing.T) {
	h, _, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	var want []string
	for _, raw := range mcppeer.FixtureTools() {
		want = append(want, PublicToolName("fixture", raw))
	}
	got := h.names()
	if diff := cmp.Diff(len(want), len(got)); diff != "" {
		t.Fatalf("tool count (-want +got):\n%s\ngot %v", diff, got)
	}
	for _, name := range want {
		if _, ok := h.reg.Get(name); !ok {
			t.Errorf("%s not registered; have %v", name, got)
		}
	}
	if _, ok := h.reg.Get("mcp__fixture__admin_reset_2d9bb2dfe9aa"); !ok {
		t.Errorf("golden G6 name missing; have %v", got)
	}
	if _, ok := h.reg.Get("add"); ok {
		t.Error("bare raw name registered")
	}
	add, _ := h.reg.Get("mcp__fixture__add")
	if add.Description != "Adds two numbers." {
		t.Errorf("description = %q", add.Description)
	}
	st := h.srv.Status()
	if st.State != StateReady || st.Tools != len(want) || st.PeerName != "fixture-server" || st.ProtocolVersion == "" {
		t.Errorf("status = %+v", st)
	}
}

// docs/upstream.md §8.2 cases 34–50 and §8.4 cases 104–108, through a real SDK
// server: texts, failures, images, structured output.
func TestCallResults(t *testing.T) {
	h, _, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	tests := []struct {
		name, args string
		isError    bool
		text       string
		valueHas   string
	}{
		{"mcp__fixture__add", `{"a":2,"b":3}`, false, "5", `"text":"5"`},
		{"mcp__fixture__greet", `{"name":"World"}`, false, "Hello, World!", ""},
		{"mcp__fixture__admin_reset_2d9bb2dfe9aa", `{}`, false, "reset done", ""},
		{"mcp__fixture__fail", `{}`, true, "Error: Something went wrong", ""},
		{"mcp__fixture__image", `{}`, false, "Here is an image:\n" + imageDiag + "\nEnd of image.", "iVBORw0KGgo"},
		{"mcp__fixture__structured", `{}`, false, "42", `"structuredContent":{"answer":42}`},
		{"mcp__fixture__badstructured", `{}`, true, `Error: tool "mcp__fixture__badstructured" returned invalid output: structuredContent.answer: `, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.call(tc.name, tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, result %+v", res.IsError, res)
			}
			if got := res.Text(); !strings.HasPrefix(got, tc.text) {
				t.Errorf("text = %q, want prefix %q", got, tc.text)
			}
			if tc.valueHas != "" && !strings.Contains(string(res.Value), tc.valueHas) {
				t.Errorf("value %s lacks %s", res.Value, tc.valueHas)
			}
			if tc.isError && res.Value != nil {
				t.Errorf("failed call has a value: %s", res.Value)
			}
		})
	}
	// The image result keeps text runs and the diagnostic as separate blocks
	// and no base64 reaches the model view (docs/upstream.md §4.7, case 108).
	res := h.call("mcp__fixture__image", `{}`)
	want := []tool.Content{tool.Text("Here is an image:"), tool.Text(imageDiag), tool.Text("End of image.")}
	if diff := cmp.Diff(want, res.Content); diff != "" {
		t.Errorf("image content (-want +got):\n%s", diff)
	}
}

// docs/upstream.md §8.2 cases 34, 35, 75, 76: the raw name goes on the wire, and a
// non-object argument becomes {}.
func TestRawNameAndArgumentsOnTheWire(t *testing.T) {
	h, _, rec := fixtureHarness(t, mcppeer.FixtureOptions{})
	tests := []struct{ public, args, wantName, wantArgs string }{
		{"mcp__fixture__admin_reset_2d9bb2dfe9aa", `{"k":[1,2]}`, "admin.reset", `{"k":[1,2]}`},
		{"mcp__fixture__echo", `null`, "echo", `{}`},
		{"mcp__fixture__echo", `"bad"`, "echo", `{}`},
		{"mcp__fixture__echo", `[1]`, "echo", `{}`},
		{"mcp__fixture__echo", `7`, "echo", `{}`},
		{"mcp__fixture__echo", ``, "echo", `{}`},
	}
	for _, tc := range tests {
		h.call(tc.public, tc.args)
		last := rec.last()
		if last == nil || last.Name != tc.wantName || string(last.Arguments) != tc.wantArgs {
			t.Errorf("call %s %s: wire saw %+v, want name %q args %s", tc.public, tc.args, last, tc.wantName, tc.wantArgs)
		}
	}
}

// The caller's cancellation and toolCallTimeoutMs both end the call and
// reach the server as notifications/cancelled.
func TestCancellationReachesServer(t *testing.T) {
	cancelled := make(chan struct{}, 2)
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{OnCancel: func() { cancelled <- struct{}{} }})
	rec := newWireRecorder(srv)
	cfg := stdioConfig("fixture")
	cfg.ToolCallTimeout = 150 * time.Millisecond
	h := mustStart(t, cfg, Options{NewTransport: inMemory(t, srv)})

	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-rec.seen
			cancel()
		}()
		res, _ := h.reg.Execute(ctx, "mcp__fixture__slow", json.RawMessage(`{"ms":100000}`))
		if !res.IsError {
			t.Fatalf("cancelled call succeeded: %+v", res)
		}
		waitSignal(t, cancelled, "server saw the cancellation")
	})
	t.Run("timeout", func(t *testing.T) {
		res := h.call("mcp__fixture__slow", `{"ms":100000}`)
		<-rec.seen
		if want := `Error: server "fixture" did not answer tools/call "slow" within toolCallTimeoutMs (150ms)`; res.Text() != want {
			t.Errorf("text = %q, want %q", res.Text(), want)
		}
		if res.Error == nil || res.Error.Code != tool.CodeTimeout {
			t.Errorf("error = %+v, want code %s", res.Error, tool.CodeTimeout)
		}
		waitSignal(t, cancelled, "server saw the timeout's cancellation")
	})
}

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting: %s", what)
	}
}

// docs/upstream.md §8.1 case 16: a real notifications/tools/list_changed re-syncs.
func TestListChangedResyncs(t *testing.T) {
	h, srv, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	if res := h.call("mcp__fixture__add_tool", `{"name":"fresh"}`); res.IsError {
		t.Fatalf("add_tool: %s", res.Text())
	}
	waitFor(t, "mcp__fixture__fresh", func() bool { _, ok := h.reg.Get("mcp__fixture__fresh"); return ok })
	srv.RemoveTools("greet")
	waitFor(t, "greet to go", func() bool { _, ok := h.reg.Get("mcp__fixture__greet"); return !ok })
	if !h.log.HasRecord(slog.LevelInfo, msgResync, "server", "fixture") {
		t.Errorf("no re-sync log record; log:\n%s", h.log.Text())
	}
	if _, ok := h.reg.Get("mcp__fixture__add"); !ok {
		t.Error("unchanged tool lost its name across the re-sync")
	}
}

// docs/upstream.md §8.1 cases 14, 30 and docs/decisions.md §8: a foreign tool squatting a
// public name rolls the whole generation back; the squatter stays; status
// says so.
func TestRegistrationConflict(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			reg := tool.NewRegistry()
			squat := tool.Tool{Name: "mcp__fixture__add", Description: "Foreign squatter", InputSchema: json.RawMessage(`{}`),
				Execute: func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }}
			if _, err := reg.Register(squat); err != nil {
				t.Fatal(err)
			}
			cfg := stdioConfig("fixture")
			cfg.FailOnStartupError = strict
			h, err := start(t, cfg, Options{Registry: reg, NewTransport: inMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))})
			if strict && (err == nil || !strings.Contains(err.Error(), `tool "mcp__fixture__add" is already registered`)) {
				t.Errorf("strict startup error = %v", err)
			}
			if !strict && err != nil {
				t.Errorf("contained conflict failed startup: %v", err)
			}
			if got := h.names(); len(got) != 1 || got[0] != "mcp__fixture__add" {
				t.Errorf("registry = %v, want only the squatter", got)
			}
			if d, _ := reg.Get("mcp__fixture__add"); d.Description != "Foreign squatter" {
				t.Errorf("squatter replaced: %q", d.Description)
			}
			if !h.log.HasRecord(slog.LevelError, "tool registration failed, no tools registered", "server", "fixture", "err", mcptest.Contains("mcp__fixture__add")) {
				t.Errorf("log:\n%s", h.log.Text())
			}
			if st := h.srv.Status(); !strict && (st.State != StateFailed || !strings.Contains(st.Err, "mcp__fixture__add")) {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

// docs/upstream.md §8.1 case 18: closing unregisters the current generation.
func TestCloseUnregisters(t *testing.T) {
	h, _, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	if h.reg.Len() == 0 {
		t.Fatal("nothing registered")
	}
	if err := h.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if got := h.names(); len(got) != 0 {
		t.Errorf("after Close: %v", got)
	}
	if st := h.srv.Status(); st.State != StateClosed {
		t.Errorf("state = %s", st.State)
	}
	res, _ := h.reg.Execute(context.Background(), "mcp__fixture__add", nil)
	if res.Text() != `Error: unknown tool "mcp__fixture__add"` {
		t.Errorf("call after close: %q", res.Text())
	}
	if err := h.srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func rawHarness(t *testing.T, script mcppeer.RawScript, cfg Config) (*harness, error) {
	t.Helper()
	return start(t, cfg, Options{NewTransport: rawPipe(t, mcppeer.NewRawServer(script))})
}

func onePage(tools ...json.RawMessage) []mcppeer.RawPage {
	return []mcppeer.RawPage{{Tools: tools}}
}

// Results the SDK cannot decode are carried through and projected, never a
// failed call (docs/decisions.md §6; docs/upstream.md §8.2 cases 47, 53–66).
func TestRawResultsAreProjected(t *testing.T) {
	results := map[string]string{
		"video":     `{"content":[{"type":"text","text":"a"},{"type":"video","uri":"x"},{"type":"text","text":"b"}]}`,
		"primitive": `{"content":[42,null,["nested"]]}`,
		"notype":    `{"content":[{"text":"t"}]}`,
		"legacy":    `{"toolResult":{"key":"value"}}`,
		"legacyerr": `{"toolResult":{"reason":"nope"},"isError":true}`,
		"empty":     `{"content":[]}`,
		"noresult":  `{}`,
		"audio":     `{"content":[{"type":"audio","mimeType":"audio/mp3","data":"AA=="}]}`,
		"link":      `{"content":[{"type":"resource_link","name":"Design","uri":"https://example.test/design"}]}`,
		"array":     `[1]`,
		"bigint":    `{"content":[{"type":"text","text":"n","annotations":{"z":1,"a":2}}],"structuredContent":{"n":12345678901234567890}}`,
	}
	script := mcppeer.RawScript{Results: map[string]json.RawMessage{}}
	var tools []json.RawMessage
	for name, r := range results {
		script.Results[name] = json.RawMessage(r)
		tools = append(tools, mcppeer.RawTool(name, ""))
	}
	script.Pages = onePage(tools...)
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool    string
		isError bool
		text    string
		value   string
	}{
		{"video", false, "a\n[unsupported MCP content type: video]\nb", `{"content":[{"type":"text","text":"a"},{"type":"video","uri":"x"},{"type":"text","text":"b"}]}`},
		{"primitive", false, strings.Repeat("[unsupported MCP content block: expected an object]\n", 2) + "[unsupported MCP content block: expected an object]", `{"content":[42,null,["nested"]]}`},
		{"notype", false, "[unsupported MCP content type: undefined]", ""},
		{"legacy", false, `{"key":"value"}`, `{"content":[{"type":"text","text":"{\"key\":\"value\"}"}]}`},
		{"legacyerr", true, `Error: {"reason":"nope"}`, ""},
		{"empty", false, "(empty returned no model-visible content)", `{"content":[]}`},
		{"noresult", false, "(no output)", ""},
		{"audio", false, "[audio result unsupported: audio/mp3; raw audio data remains available to programmatic callers]", ""},
		{"link", false, "Resource link: Design (https://example.test/design)", ""},
		{"array", true, `Error: server "raw" returned an invalid tools/call result: `, ""},
		{"bigint", false, "n", `{"content":[{"type":"text","text":"n","annotations":{"z":1,"a":2}}],"structuredContent":{"n":12345678901234567890}}`},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := h.call("mcp__raw__"+tc.tool, `{}`)
			if res.IsError != tc.isError || (res.Text() != tc.text && !(tc.isError && strings.HasPrefix(res.Text(), tc.text))) {
				t.Errorf("got isError=%v %q, want %v %q", res.IsError, res.Text(), tc.isError, tc.text)
			}
			if tc.value != "" && string(res.Value) != tc.value {
				t.Errorf("value = %s\nwant    %s", res.Value, tc.value)
			}
		})
	}
}

// A JSON-RPC error is rendered as the TypeScript SDK does.
func TestJSONRPCErrorText(t *testing.T) {
	script := mcppeer.RawScript{
		Pages:  onePage(mcppeer.RawTool("boom", "")),
		Errors: map[string]mcppeer.RawError{"boom": {Code: -32602, Message: "bad params"}},
	}
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.call("mcp__raw__boom", `{}`).Text(); got != "Error: MCP error -32602: bad params" {
		t.Errorf("text = %q", got)
	}
}

// Tool definitions pass through byte for byte: description and schemas
// untouched (docs/upstream.md §4.1), pagination followed (case 32), and the
// task-only tool registered, and called as a task (case 51).
func TestDefinitionsPassThrough(t *testing.T) {
	schema := `{"type":"object","properties":{"z":{"type":"number","minimum":1e2},"a":{"type":"string"}},"$schema":"https://json-schema.org/draft/2020-12/schema","required":["z"]}`
	out := `{"type":"object","properties":{"answer":{"type":"integer"}}}`
	script := mcppeer.RawScript{Pages: []mcppeer.RawPage{
		{Tools: []json.RawMessage{json.RawMessage(`{"name":"first","description":"D1","inputSchema":` + schema + `,"outputSchema":` + out + `}`)}},
		{Tools: []json.RawMessage{json.RawMessage(`{"name":"tasky","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)}},
	}}
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	first, ok := h.reg.Get("mcp__raw__first")
	if !ok {
		t.Fatalf("first missing: %v", h.names())
	}
	if string(first.InputSchema) != schema || string(first.OutputSchema) != out || first.Description != "D1" {
		t.Errorf("definition changed:\n%s\n%s\n%q", first.InputSchema, first.OutputSchema, first.Description)
	}
	tasky, ok := h.reg.Get("mcp__raw__tasky")
	if !ok || tasky.Description != "" {
		t.Fatalf("tasky = %+v, %v", tasky, ok)
	}
	// Called as a task (internal/tasks): the script's server knows no
	// tasky, and says so.
	if got := h.call("mcp__raw__tasky", `{}`).Text(); got != `Error: server "raw": MCP error -32602: tools/call: unknown tool "tasky"` {
		t.Errorf("task-only call: %q", got)
	}
}

// Invalid lists register nothing and say why (docs/upstream.md §8.2 case 28,
// docs/decisions.md §8 for mimicry and pagination).
func TestInvalidListsRegisterNothing(t *testing.T) {
	tests := []struct {
		name   string
		script mcppeer.RawScript
		want   string
	}{
		{"duplicate", mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("dup", ""), mcppeer.RawTool("dup", ""))},
			`mcp-client(raw): server listed tool "dup" more than once — invalid tool list`},
		{"mimicry", mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("admin.reset", ""), mcppeer.RawTool("admin_reset_73a3cbd62f70", ""))},
			`both map to the public name`},
		{"repeated cursor", mcppeer.RawScript{Pages: []mcppeer.RawPage{
			{Tools: []json.RawMessage{mcppeer.RawTool("a", "")}, NextCursor: mcppeer.RawCursor(1)},
			{Tools: []json.RawMessage{mcppeer.RawTool("b", "")}, NextCursor: mcppeer.RawCursor(1)},
		}}, `returned the cursor "page-1" twice`},
		{"endless", mcppeer.RawScript{Pages: []mcppeer.RawPage{{}}, Endless: true},
			`more than 1000 pages`},
		{"no input schema", mcppeer.RawScript{Pages: onePage(json.RawMessage(`{"name":"x","inputSchema":null}`))},
			`tool "x" has no inputSchema object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "mimicry" {
				// the clean name that mimics the hashed name of admin.reset
				mimic := PublicToolName("raw", "admin.reset")[len("mcp__raw__"):]
				tc.script.Pages = onePage(mcppeer.RawTool("admin.reset", ""), mcppeer.RawTool(mimic, ""))
			}
			cfg := stdioConfig("raw")
			cfg.FailOnStartupError = true
			h, err := rawHarness(t, tc.script, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
			if n := h.reg.Len(); n != 0 {
				t.Errorf("%d tools registered", n)
			}
		})
	}
}

// A re-sync whose fetch fails keeps the previous generation (case 17/29).
func TestFailedResyncKeepsPrevious(t *testing.T) {
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("stable", ""))})
	h := mustStart(t, stdioConfig("raw"), Options{NewTransport: rawPipe(t, raw)})
	raw.SetScript(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("dup", ""), mcppeer.RawTool("dup", ""))})
	if err := raw.NotifyToolsChanged(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "re-sync failure log", func() bool {
		return h.log.HasRecord(slog.LevelError, "tool re-sync failed", "server", "raw", "err", mcptest.Contains(`listed tool "dup" more than once`))
	})
	if got := h.names(); len(got) != 1 || got[0] != "mcp__raw__stable" {
		t.Errorf("registry = %v", got)
	}
}

// enabledTools and disabledTools filter by raw name.
func TestToolFilters(t *testing.T) {
	script := mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("a", ""), mcppeer.RawTool("b", ""), mcppeer.RawTool("c", ""))}
	cfg := stdioConfig("raw")
	cfg.EnabledTools = []string{"a", "c"}
	h, err := rawHarness(t, script, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__raw__a", "mcp__raw__c"}, h.names()); diff != "" {
		t.Errorf("enabledTools (-want +got):\n%s", diff)
	}
	cfg = stdioConfig("raw")
	cfg.DisabledTools = []string{"a"}
	h, err = rawHarness(t, script, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__raw__b", "mcp__raw__c"}, h.names()); diff != "" {
		t.Errorf("disabledTools (-want +got):\n%s", diff)
	}
}

func TestStartRejectsBadInput(t *testing.T) {
	if _, err := Start(stdioConfig("x"), Options{}); err == nil || !strings.Contains(err.Error(), "Options.Registry or Options.Source is required") {
		t.Errorf("no registry: %v", err)
	}
	_, err := Start(Config{ServerName: "bad name!", Transport: TransportStdio, Command: "x"}, Options{Registry: tool.NewRegistry()})
	if err == nil {
		t.Error("invalid serverName accepted")
	}
	var target interface{ Error() string }
	if !errors.As(err, &target) {
		t.Error("unreachable")
	}
}
