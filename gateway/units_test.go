package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestImplementation(t *testing.T) {
	tests := []struct {
		impl *mcp.Implementation
		want string
	}{
		{nil, "mcpbridge"},
		{&mcp.Implementation{Name: "my-harness", Version: "9"}, "my-harness"},
	}
	for _, tt := range tests {
		c := connectInMemory(t, newGateway(t, tool.NewRegistry(), Options{Implementation: tt.impl}))
		if got := c.session.InitializeResult().ServerInfo.Name; got != tt.want {
			t.Errorf("server name %q, want %q", got, tt.want)
		}
		// Tools only: no logging, prompts or resources are forwarded; and
		// (protocol 2026-07-28) the tasks extension, which the gateway serves.
		caps := remarshal(t, c.session.InitializeResult().Capabilities)
		want := map[string]any{"tools": map[string]any{"listChanged": true}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
		if diff := cmp.Diff(want, caps); diff != "" {
			t.Errorf("capabilities (-want +got):\n%s", diff)
		}
	}
}

type failingTransport struct{}

func (failingTransport) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("no pipe")
}

func TestTransportEdges(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{})
	err := g.ServeTransport(context.Background(), failingTransport{})
	if err == nil || !strings.Contains(err.Error(), "gateway: connecting a client session: no pipe") {
		t.Errorf("ServeTransport with a failing transport = %v", err)
	}
	// The counting transport's own edges (SupportsProtocolVersion) are
	// tested in internal/sdkwire, where it lives.
}

// The forwarder sends the latest update and nothing after stop;
// it gives up quietly when the call ends or the client is gone.
func TestProgressForwarder(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{})
	c := connectInMemory(t, g)
	var ss *mcp.ServerSession
	for s := range g.server.Sessions() {
		ss = s
	}

	f := newForwarder(context.Background(), ss, g.log)
	// Forwarded while the sender may be busy: at least the last one arrives.
	for i := 1; i <= 50; i++ {
		f.progress("p")(tool.Progress{Progress: float64(i), Total: 50, Message: fmt.Sprint("step ", i)})
	}
	f.stop()
	var last *mcp.ProgressNotificationParams
	for last == nil || last.Progress < 50 {
		last = waitSignal(t, c.progress, "the last progress update")
		if last.ProgressToken != "p" {
			t.Fatalf("token %v", last.ProgressToken)
		}
	}
	if last.Message != "step 50" || last.Total != 50 {
		t.Errorf("last update %+v", last)
	}

	// A call that ended: the forwarder stops without sending.
	ctx, cancel := context.WithCancel(context.Background())
	f = newForwarder(ctx, ss, g.log)
	cancel()
	f.progress("q")(tool.Progress{Progress: 1, Total: 0, Message: "late"})
	f.stop()

	// A closed session: the send fails and is only logged.
	c.session.Close()
	ss.Wait()
	f = newForwarder(context.Background(), ss, g.log)
	f.progress("r")(tool.Progress{Progress: 1, Total: 0, Message: "to nobody"})
	f.stop()
	select {
	case p := <-c.progress:
		if p.ProgressToken != "p" {
			t.Errorf("progress after the call ended or to a closed session: %+v", p)
		}
	default:
	}
}

// plainTexts never says yes to content the SDK would refuse: its lean reader
// agrees with the SDK's decoder.
func FuzzPlainTexts(f *testing.F) {
	for _, seed := range []string{
		`[{"type":"text","text":"a"}]`, `[]`, `[{"type":"text","text":1}]`, `[{"type":"image","text":"a"}]`,
		`[{"type":"text","text":"a","text":"b"}]`, `[{"type":"text"}]`, `[{"text":"a","type":"text"},{"type":"text","text":"\u00e9"}]`,
		`[{"type":"text","text":"a","annotations":{"priority":"high"}}]`, `[1]`, `{"type":"text"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		if !json.Valid([]byte(content)) || !plainTexts(json.RawMessage(content)) {
			return
		}
		var probe mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":`+content+`}`), &probe); err != nil {
			t.Errorf("plainTexts(%s) = true, but the SDK refuses it: %v", content, err)
		}
	})
}
