package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// childEnv makes the test binary run the demo server on stdio (see TestRun).
const childEnv = "DEMO_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := Run(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// connect serves a fresh demo server in memory and returns a connected
// client session; both are torn down when the test ends.
func connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		<-done
		t.Fatalf("connecting to the demo server: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v, want nil", err)
		}
	})
	return cs
}

func TestServerInfo(t *testing.T) {
	cs := connect(t)
	res := cs.InitializeResult()
	if got, want := res.ServerInfo.Name, "mcpbridge-demo"; got != want {
		t.Errorf("server name = %q, want %q", got, want)
	}
	if got, want := res.ServerInfo.Version, "1.0.0"; got != want {
		t.Errorf("server version = %q, want %q", got, want)
	}
	if res.Capabilities.Tools == nil {
		t.Errorf("tools capability missing: %+v", res.Capabilities)
	}
}

// TestToolDefinitions checks what a newcomer sees in `mcpbridge tools`:
// every tool and every input property is described.
func TestToolDefinitions(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	type def struct {
		Props     map[string]bool // property name -> has a description
		Required  []string
		HasOutput bool
	}
	got := map[string]def{}
	for _, tl := range res.Tools {
		if tl.Description == "" || tl.Title == "" {
			t.Errorf("tool %q lacks a title or description", tl.Name)
		}
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint {
			t.Errorf("tool %q is not annotated read-only", tl.Name)
		}
		var schema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		remarshal(t, tl.InputSchema, &schema)
		if schema.Type != "object" {
			t.Errorf("tool %q input schema type = %q, want object", tl.Name, schema.Type)
		}
		d := def{Props: map[string]bool{}, Required: schema.Required, HasOutput: tl.OutputSchema != nil}
		for name, p := range schema.Properties {
			d.Props[name] = p.Description != ""
		}
		got[tl.Name] = d
	}
	want := map[string]def{
		"echo":    {Props: map[string]bool{"message": true}, Required: []string{"message"}},
		"add":     {Props: map[string]bool{"a": true, "b": true}, Required: []string{"a", "b"}},
		"weather": {Props: map[string]bool{"city": true}, Required: []string{"city"}, HasOutput: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool definitions (-want +got):\n%s", diff)
	}
}

func TestWeatherOutputSchema(t *testing.T) {
	cs := connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, tl := range res.Tools {
		if tl.Name != "weather" {
			continue
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		remarshal(t, tl.OutputSchema, &schema)
		want := []string{"city", "temperatureC", "conditions"}
		if diff := cmp.Diff(want, schema.Required); diff != "" || schema.Type != "object" || len(schema.Properties) != 3 {
			t.Errorf("weather outputSchema = %s; required diff (-want +got):\n%s", mustJSON(t, tl.OutputSchema), diff)
		}
		return
	}
	t.Fatal("weather tool not listed")
}

func TestCalls(t *testing.T) {
	cs := connect(t)
	tests := []struct {
		name       string
		tool       string
		args       map[string]any
		wantText   string
		wantError  bool
		wantStruct map[string]any
	}{
		{name: "echo", tool: "echo", args: map[string]any{"message": "hello"}, wantText: "Echo: hello"},
		{name: "echo empty", tool: "echo", args: map[string]any{"message": ""}, wantText: "Echo: "},
		{name: "echo missing message", tool: "echo", args: map[string]any{}, wantText: "message", wantError: true},
		{name: "add integers", tool: "add", args: map[string]any{"a": 2, "b": 3}, wantText: "5"},
		{name: "add fractions", tool: "add", args: map[string]any{"a": 1, "b": 1.5}, wantText: "2.5"},
		{name: "add to zero", tool: "add", args: map[string]any{"a": -0.5, "b": 0.5}, wantText: "0"},
		{name: "add overflow", tool: "add", args: map[string]any{"a": 1e308, "b": 1e308}, wantText: "too large", wantError: true},
		{name: "add wrong type", tool: "add", args: map[string]any{"a": "two", "b": 3}, wantText: "a", wantError: true},
		{
			name: "weather", tool: "weather", args: map[string]any{"city": "Paris"},
			wantText:   "Weather in Paris: 13 °C, light rain (demo data).",
			wantStruct: map[string]any{"city": "Paris", "temperatureC": 13.0, "conditions": "light rain"},
		},
		{name: "weather blank city", tool: "weather", args: map[string]any{"city": "  "}, wantText: "city must not be empty", wantError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("CallTool(%s): %v", tc.tool, err)
			}
			if res.IsError != tc.wantError {
				t.Errorf("isError = %v, want %v (content %s)", res.IsError, tc.wantError, mustJSON(t, res.Content))
			}
			if len(res.Content) != 1 {
				t.Fatalf("got %d content blocks, want 1: %s", len(res.Content), mustJSON(t, res.Content))
			}
			txt, ok := res.Content[0].(*mcp.TextContent)
			if !ok {
				t.Fatalf("content[0] is %T, want text", res.Content[0])
			}
			if tc.wantError {
				if !strings.Contains(txt.Text, tc.wantText) {
					t.Errorf("error text %q does not contain %q", txt.Text, tc.wantText)
				}
			} else if txt.Text != tc.wantText {
				t.Errorf("text = %q, want %q", txt.Text, tc.wantText)
			}
			var gotStruct map[string]any
			if res.StructuredContent != nil {
				remarshal(t, res.StructuredContent, &gotStruct)
			}
			if diff := cmp.Diff(tc.wantStruct, gotStruct); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWeatherDeterministic: the same city gives the same weather whatever
// its spelling, and the values stay in a plausible range.
func TestWeatherDeterministic(t *testing.T) {
	report := func(city string) weatherReport {
		t.Helper()
		_, r, err := weather(context.Background(), nil, weatherArgs{City: city})
		if err != nil {
			t.Fatalf("weather(%q): %v", city, err)
		}
		return r
	}
	a, b := report("Berlin"), report("  bERLIN ")
	if a.TemperatureC != b.TemperatureC || a.Conditions != b.Conditions {
		t.Errorf("Berlin %+v and bERLIN %+v differ", a, b)
	}
	if b.City != "bERLIN" {
		t.Errorf("city = %q, want the trimmed input %q", b.City, "bERLIN")
	}
	seen := map[string]bool{}
	for _, city := range []string{"Paris", "Berlin", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Perth", "Dakar", "Hanoi"} {
		r := report(city)
		if r.TemperatureC < 5 || r.TemperatureC > 30 {
			t.Errorf("%s: temperature %d outside 5..30", city, r.TemperatureC)
		}
		seen[r.Conditions] = true
	}
	if len(seen) < 2 {
		t.Errorf("ten cities all had the same conditions %v; the hash is not spreading", seen)
	}
}

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{5, "5"},
		{2.5, "2.5"},
		{-0.125, "-0.125"},
		{0, "0"},
		{1234567, "1234567"},
		{0.30000000000000004, "0.30000000000000004"},
		{1e21, "1e+21"},
		{1e-7, "1e-07"},
	}
	for _, tc := range tests {
		if got := formatNumber(tc.in); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestServeEndsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after cancel = %v, want nil", err)
	}
}

type failingTransport struct{}

func (failingTransport) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("no pipe")
}

func TestServeReportsTransportError(t *testing.T) {
	err := serve(context.Background(), failingTransport{})
	if err == nil || !strings.Contains(err.Error(), "serving the demo MCP server") || !strings.Contains(err.Error(), "no pipe") {
		t.Errorf("serve = %v, want a wrapped transport error", err)
	}
}

// TestRun runs Run for real on the stdio of a child process (this test
// binary, re-executed) and talks to it as the bridge would.
func TestRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to the demo child: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "from a child"}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if diff := cmp.Diff(`[{"type":"text","text":"Echo: from a child"}]`, mustJSON(t, res.Content)); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	// Closing stdin is the normal end: the child must exit 0 by itself
	// (a non-zero status or a SIGTERM would make Close return an error).
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session: %v (child stderr: %s)", err, stderr.String())
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatalf("marshal %T: %v", from, err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatalf("unmarshal %s into %T: %v", b, to, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}
