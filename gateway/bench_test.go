package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// BenchmarkStdioCall is one tools/call through ServeStdio: to a Go tool
// (the gateway's own server-side cost), and to a raw stdio child behind
// an mcpclient bridge (the whole forwarding path of serve --stdio, in one
// process). The client is the raw go-sdk over pipes.
func BenchmarkStdioCall(b *testing.B) {
	b.Run("go-tool", func(b *testing.B) {
		reg := tool.NewRegistry()
		if _, err := reg.Register(goTool("echo", textBody("echo"))); err != nil {
			b.Fatal(err)
		}
		benchCalls(b, reg, "echo")
	})
	b.Run("child", func(b *testing.B) {
		benchCalls(b, echoChild(b), "mcp__bench__echo")
	})
}

// echoChild starts a raw stdio child whose tool echo answers "echo",
// behind an mcpclient bridge under serverName bench (closed when b ends),
// and returns the registry it fills.
func echoChild(b *testing.B) *tool.Registry {
	reg := tool.NewRegistry()
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("echo", "echo")}}},
		Results: map[string]json.RawMessage{"echo": json.RawMessage(`{"content":[{"type":"text","text":"echo"}]}`)},
	}
	cmd, args, env := mcptest.ChildCommand(b, "raw", mcppeer.RawScriptEnv+"="+mcptest.WriteRawScript(b, script))
	startClient(b, mcpclient.Config{ServerName: "bench", Transport: mcpclient.TransportStdio, Command: cmd, Args: args, Env: env},
		mcpclient.Options{Registry: reg})
	return reg
}

// BenchmarkStdioCallLean is BenchmarkStdioCall/child with a client that
// writes and reads bare JSON-RPC lines: what is allocated per call is the
// gateway's and its bridge's alone.
func BenchmarkStdioCallLean(b *testing.B) {
	cr, cw := stdioGateway(b, echoChild(b))
	in := bufio.NewReader(cr)
	send := func(line string) {
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	answer := func() []byte {
		out, err := in.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__bench__echo","arguments":{"message":"hi"}}}`
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		send(call)
		if out := answer(); !bytes.Contains(out, []byte(`"text":"echo"`)) {
			b.Fatalf("answered %s", out)
		}
	}
	b.StopTimer()
}

// stdioGateway serves a gateway over reg on pipes until b ends, and
// returns the client's ends.
func stdioGateway(b *testing.B, reg *tool.Registry) (io.ReadCloser, io.WriteCloser) {
	g := New(reg, Options{})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(context.Background(), sr, sw) }()
	b.Cleanup(func() {
		cw.Close()
		<-done
		g.Close()
	})
	return cr, cw
}

// benchCalls measures calls of name through a gateway on reg over stdio.
func benchCalls(b *testing.B, reg *tool.Registry, name string) {
	cr, cw := stdioGateway(b, reg)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hi"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cs.Close()
}

// BenchmarkHTTPCall is one tools/call to a Go tool through the gateway's
// Streamable HTTP endpoint on a loopback listener: its server-side cost
// over HTTP, the client (which offers nothing, as the bridge's own)
// included.
func BenchmarkHTTPCall(b *testing.B) {
	reg := echoRegistry(b)
	// "engine-own" is the gateway's own transport (the default),
	// "engine-sdk" the spike's SDK transport per session (docs/engine.md),
	// each with the take serve --stdio uses.
	engines := map[string]string{
		"engine-sdk": serveGateway(b, withEngine(New(reg, Options{}), "sdk")),
		"engine-own": serveGateway(b, New(reg, Options{})),
	}
	for _, path := range []string{"engine-own", "engine-sdk"} {
		b.Run(path, func(b *testing.B) {
			addr := engines[path]
			opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, opts).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			benchHTTPCalls(b, cs, "echo")
		})
	}
}

// BenchmarkHTTPCallConcurrent is BenchmarkHTTPCall's own transport with
// 64 callers on one session, as the process bench's 64-caller rows (the
// go-sdk client keeps two idle connections, so most calls come on a new
// one).
func BenchmarkHTTPCallConcurrent(b *testing.B) {
	addr := serveGateway(b, New(echoRegistry(b), Options{}))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}
	b.ReportAllocs()
	b.SetParallelism(32) // 64 callers on 2 CPUs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cs.CallTool(context.Background(), params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHTTPCallStateless is BenchmarkHTTPCall on a stateless gateway
// (serve --http --stateless), for a 2025-11-25 client and a 2026-07-28
// one (the client's default): each POST served on a session of its own,
// its call taken beneath it.
func BenchmarkHTTPCallStateless(b *testing.B) {
	addr := serveBench(b, echoRegistry(b), Options{Stateless: true})
	for _, path := range []struct{ name, version string }{{"2025-11-25", "2025-11-25"}, {"2026-07-28", ""}} {
		b.Run(path.name, func(b *testing.B) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: path.version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			benchHTTPCalls(b, cs, "echo")
		})
	}
}

// echoRegistry is a registry of one tool, echo.
func echoRegistry(b *testing.B) *tool.Registry {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("echo", textBody("echo"))); err != nil {
		b.Fatal(err)
	}
	return reg
}

// serveBench serves a gateway of reg with opts on a loopback port until
// the benchmark ends, and returns its address.
func serveBench(b *testing.B, reg *tool.Registry, opts Options) string {
	return serveGateway(b, New(reg, opts))
}

// withEngine turns a design of the engine spike (engine.go) on for g.
func withEngine(g *Gateway, design string) *Gateway {
	was := engineDefault
	engineDefault = design
	defer func() { engineDefault = was }()
	g.engine = spikeEngine(g)
	return g
}

// serveGateway serves g on a loopback port until the benchmark ends, and
// returns its address.
func serveGateway(b *testing.B, g *Gateway) string {
	b.Cleanup(func() { g.Close() })
	ln, err := Listen("127.0.0.1:0", Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	b.Cleanup(stop)
	go g.ServeListener(ctx, ln)
	return ln.Addr().String()
}

// BenchmarkHTTPCallChild is BenchmarkHTTPCall/fast to a raw stdio child
// behind an mcpclient bridge: the whole forwarding path of serve --http,
// in one process.
func BenchmarkHTTPCallChild(b *testing.B) {
	addr := serveBench(b, echoChild(b), Options{})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	benchHTTPCalls(b, cs, "mcp__bench__echo")
}

// benchHTTPCalls runs the benchmark's calls of the tool name on cs.
func benchHTTPCalls(b *testing.B, cs *mcp.ClientSession, name string) {
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"message": "hi"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}
