package sdkwire

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// initializeAsking opens a session of srv with an initialize that asks
// for version, and returns the session and the version it was answered.
func initializeAsking(t *testing.T, srv *mcp.Server, version string) (*mcp.ServerSession, string) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	id, _ := jsonrpc.MakeID(float64(1))
	params := `{"protocolVersion":"` + version + `","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: json.RawMessage(params)}); err != nil {
		t.Fatal(err)
	}
	msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil {
		t.Fatalf("initialize asking %s: %+v", version, msg)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatal(err)
	}
	return ss, res.ProtocolVersion
}

// Assumption 41: the SDK's server answers an initialize with the version
// NegotiateInitialize makes of the one asked, yet keeps as the session's
// InitializeParams the version the client asked for; the params it keeps
// are those its receiving middleware was handed, so what
// NegotiateInitialize set there is what the session keeps.
func TestContractInitializeKeepsRequestedVersion(t *testing.T) {
	for _, asked := range append(mcp.SupportedProtocolVersions(), "2099-01-01", "2024-01-01", "") {
		p := &mcp.InitializeParams{ProtocolVersion: asked}
		NegotiateInitialize(p)
		want := p.ProtocolVersion
		if want >= serverwire.PerRequestVersion || want == "" {
			t.Errorf("asking %q: NegotiateInitialize made %q, want a version initialize speaks", asked, want)
		}

		ss, answered := initializeAsking(t, newServer(nil), asked)
		if answered != want {
			t.Errorf("asking %q: the SDK answered %q, NegotiateInitialize says %q", asked, answered, want)
		}
		if got := ss.InitializeParams().ProtocolVersion; got != asked {
			t.Errorf("asking %q (answered %q): the SDK keeps %q, want the version asked", asked, answered, got)
		}

		srv := newServer(nil)
		var handed *mcp.InitializeParams
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && method == "initialize" {
					handed = p
					NegotiateInitialize(p)
				}
				return next(ctx, method, req)
			}
		})
		ss, answered = initializeAsking(t, srv, asked)
		kept := ss.InitializeParams()
		if answered != want || kept != handed || kept.ProtocolVersion != want {
			t.Errorf("asking %q through NegotiateInitialize: answered %q, kept %q (the params handed: %v), want %q kept and answered",
				asked, answered, kept.ProtocolVersion, kept == handed, want)
		}
	}
}
