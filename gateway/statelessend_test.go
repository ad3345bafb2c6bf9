package gateway

import (
	"context"
	"io"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A stateless 2026-07-28 POST's requests that the SDK's session serves
// end with the POST: its client leaving cancels them, whatever they wait
// for (a backend's prompt, the gateway's backends getting ready before a
// tools/call), and leaves neither the POST's session nor a goroutine
// behind, as the SDK's transport ends a stateless POST's handlers.
func TestHTTPStatelessPerRequestEndsWithItsPOST(t *testing.T) {
	for _, tt := range []struct {
		name, method, target, params string
		offers                       string // the client's capabilities
		notReady                     bool
	}{
		// A client that offers nothing: no question can park the request.
		{name: "prompts/get", method: "prompts/get", target: "hold", params: `{"name":"hold"`, offers: `{}`},
		// A client that offers elicitation: the SDK's session serves the call.
		{name: "tools/call before ready", method: "tools/call", target: "quick", params: `{"name":"quick","arguments":{}`, offers: `{"elicitation":{}}`, notReady: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, exited := make(chan struct{}, 1), make(chan error, 1)
			hold := tool.Prompt{Name: "hold", Get: func(ctx context.Context, _ map[string]string) (tool.PromptResult, error) {
				entered <- struct{}{}
				<-ctx.Done()
				exited <- context.Cause(ctx)
				return tool.PromptResult{}, ctx.Err()
			}}
			if err := reg.NewSource().PublishOffer(tool.Offer{Server: "s", Prompts: []tool.Prompt{hold}, Tools: []tool.Tool{goTool("quick", textBody("ran"))}}); err != nil {
				t.Fatal(err)
			}
			opts := Options{}
			if tt.notReady {
				opts.Ready = make(chan struct{}) // never: the call waits for it
				entered <- struct{}{}
			}
			ignore := goleak.IgnoreCurrent()
			g := newGateway(t, reg, opts)
			base := serveHTTP(t, g, opts)
			body := `{"jsonrpc":"2.0","id":7,"method":"` + tt.method + `","params":` + tt.params +
				`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.offers + `}}}`
			ctx, leave := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp := postStateless(ctx, t, base, body, false, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", tt.method, "Mcp-Name", tt.target); resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			waitSignal(t, entered, "the request to wait")
			waitFor(t, "the POST's session", func() bool { return g.Sessions() == 1 })
			leave()
			<-done
			if !tt.notReady {
				if err := waitSignal(t, exited, "the backend's prompt to be cancelled"); err == nil {
					t.Error("the prompt ended without a cause")

				}
			}
			waitFor(t, "the POST's session to end", func() bool { return g.Sessions() == 0 })
			if err := g.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}
