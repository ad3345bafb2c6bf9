package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/tool"
)

// webApp is a page that opens a session with the gateway at %s by fetch,
// as a browser-based MCP client does (Authorization, Mcp-Session-Id), calls
// its greet tool and shows what it could read, or why it could not.
const webApp = `<!doctype html><p id="out">running</p><script>
const gw = %q, h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
  "Authorization": "Bearer s3cret", "MCP-Protocol-Version": "2025-11-25"};
async function rpc(body) {
  const r = await fetch(gw, {method: "POST", headers: h, body: JSON.stringify(body)});
  const text = await r.text();
  const data = text.split("\n").find(l => l.startsWith("data:") && l.includes("jsonrpc"));
  return {r, msg: text.trim() === "" ? null : JSON.parse(data ? data.slice(5) : text)};
}
(async () => {
  try {
    const init = await rpc({jsonrpc: "2.0", id: 1, method: "initialize",
      params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "web", version: "1"}}});
    h["Mcp-Session-Id"] = init.r.headers.get("Mcp-Session-Id");
    await rpc({jsonrpc: "2.0", method: "notifications/initialized"});
    const call = await rpc({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "greet", arguments: {}}});
    document.getElementById("out").textContent = "session " + (h["Mcp-Session-Id"] ? "read" : "unread") + ": " + call.msg.result.content[0].text;
  } catch (e) {
    document.getElementById("out").textContent = "blocked: " + e;
  }
  document.body.insertAdjacentHTML("beforeend", '<p id="done">done</p>');
})();
</script>`

// A web app served at an origin serve's --allow-origin lists calls the
// gateway's tools from a real browser across origins, reading its session
// id from the answer; the same page served at a loopback origin not
// listed (let through by the Origin check) is blocked by the browser. Before,
// the app's preflight got 401 and it was blocked too.
func TestWebAppOfAllowedOriginCallsTheGateway(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tool.Tool{Name: "greet", Description: "Greets.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("hello from the gateway")}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	var gwURL string // set before the apps start serving
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, webApp, gwURL)
	})
	listed, unlisted := httptest.NewUnstartedServer(app), httptest.NewUnstartedServer(app)
	gw := gateway.New(reg, gateway.Options{BearerToken: "s3cret", AllowedOrigins: []string{"http://" + listed.Listener.Addr().String()}})
	t.Cleanup(func() { gw.Close() })
	gws := httptest.NewServer(gw.Handler())
	t.Cleanup(gws.Close)
	gwURL = gws.URL + "/mcp"
	for _, s := range []*httptest.Server{listed, unlisted} {
		s.Start()
		t.Cleanup(s.Close)
	}

	for _, tc := range []struct {
		what, url, want string
	}{
		{"the listed origin's app", listed.URL, "session read: hello from the gateway"},
		{"a loopback origin's app, not listed", unlisted.URL, "blocked: TypeError"},
	} {
		ctx := newTab(t)
		do(t, ctx, chromedp.Navigate(tc.url), chromedp.WaitVisible(chromedp.ID("done")))
		if got := text(t, ctx, "#out"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: the page says %q, want %q", tc.what, got, tc.want)
		}
	}
}
