package demo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The handshake identity; the embedded default config and its docs show it.
const (
	serverName    = "mcpbridge-demo"
	serverVersion = "1.0.0"
)

// NewServer returns the demo MCP server with its tools registered: echo,
// add and weather. Each call returns a new, unconnected server; it is safe
// to connect it to several clients at once.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{
		Name:    serverName,
		Title:   "mcpbridge demo server",
		Version: serverVersion,
	}, &mcp.ServerOptions{
		Instructions: "Demo tools for trying mcpbridge: echo, add and weather. " +
			"All answers are deterministic; the weather is made up.",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the given message, prefixed with \"Echo: \". Handy to check that a server answers.",
		Annotations: readOnly(),
	}, echo)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Adds two numbers and returns the sum as text, e.g. a=2, b=3 gives 5.",
		Annotations: readOnly(),
	}, add)
	mcp.AddTool(s, &mcp.Tool{
		Name:  "weather",
		Title: "Demo weather",
		Description: "Returns made-up but deterministic current weather for a city, " +
			"both as text and as structured content (demo data, not a forecast).",
		Annotations: readOnly(),
	}, weather)
	return s
}

// Run serves a new demo server on os.Stdin and os.Stdout until the client
// closes stdin or ctx is done; both are a normal end and return nil. It is
// what `mcpbridge demo-server` runs. It blocks; call it once per process,
// because it owns the process's stdio.
func Run(ctx context.Context) error {
	return serve(ctx, &mcp.StdioTransport{})
}

// serve runs a new demo server on t until the session ends or ctx is done.
// It is Run without the fixed stdio, so tests can use in-memory transports.
func serve(ctx context.Context, t mcp.Transport) error {
	err := NewServer().Run(ctx, t)
	if err == nil || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return nil
	}
	return fmt.Errorf("serving the demo MCP server: %w", err)
}

// readOnly marks a tool as safe to call at any time: the demo touches
// nothing outside itself.
func readOnly() *mcp.ToolAnnotations {
	closed := false
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type echoArgs struct {
	Message string `json:"message" jsonschema:"The text to send back."`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
	return text("Echo: " + in.Message), nil, nil
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"The first number."`
	B float64 `json:"b" jsonschema:"The second number."`
}

func add(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
	sum := in.A + in.B
	if math.IsInf(sum, 0) {
		return nil, nil, fmt.Errorf("add: the sum of %v and %v is too large to represent", in.A, in.B)
	}
	return text(formatNumber(sum)), nil, nil
}

// formatNumber prints a number the way JavaScript's String(n) does for the
// usual range (5, 2.5, -0.125), so results read the same as from Node servers.
func formatNumber(f float64) string {
	if f == 0 {
		return "0" // also for -0, as JavaScript does
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

type weatherArgs struct {
	City string `json:"city" jsonschema:"The city to report on, e.g. Paris."`
}

// weatherReport is the structured result; its Go type gives the tool's
// outputSchema.
type weatherReport struct {
	City         string `json:"city" jsonschema:"The city, as given."`
	TemperatureC int    `json:"temperatureC" jsonschema:"Temperature in degrees Celsius."`
	Conditions   string `json:"conditions" jsonschema:"The sky in a few words, e.g. sunny."`
}

func weather(_ context.Context, _ *mcp.CallToolRequest, in weatherArgs) (*mcp.CallToolResult, weatherReport, error) {
	conditions := [...]string{"sunny", "partly cloudy", "cloudy", "light rain", "windy"}
	city := strings.TrimSpace(in.City)
	if city == "" {
		return nil, weatherReport{}, errors.New("weather: city must not be empty")
	}
	// A hash of the normalized name: the same city always gets the same
	// weather, whatever its capitalization.
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(city)))
	n := h.Sum32()
	r := weatherReport{
		City:         city,
		TemperatureC: 5 + int(n%26),
		Conditions:   conditions[(n/26)%uint32(len(conditions))],
	}
	return text(fmt.Sprintf("Weather in %s: %d °C, %s (demo data).", r.City, r.TemperatureC, r.Conditions)), r, nil
}
