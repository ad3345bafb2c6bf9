package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The checks a 2026-07-28 POST passes before any Gate answer a call of a
// tool hidden from its caller as they answer one of a tool that does not
// exist, so probing them tells nothing: a task tool's call without its
// _meta version was let through to the Gate (unknown tool) where any
// other call is refused 400, and an Mcp-Param-* header was checked against
// the hidden tool's schema (-32020) where an unknown tool has none.
func TestHiddenToolsUnprobedByRequestChecks(t *testing.T) {
	reg := tool.NewRegistry()
	secret := goTool("secret", textBody("ran"))
	secret.Background = true
	secret.InputSchema = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	if _, err := reg.Register(secret); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, Gate: screenOut{"secret"}}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	probe := func(name, args, meta string, header ...string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,"_meta":{` + meta + `}}}`
		status, got, _ := readStateless(t, base, body, false, append(perRequestHeaders(name), header...)...)
		return http.StatusText(status) + " " + strings.ReplaceAll(got, name, "NAME")
	}
	for what, p := range map[string]struct {
		args, meta string
		header     []string
	}{
		"a task call without its _meta version": {`{}`, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, nil},
		"a call whose Mcp-Param-Region differs": {`{"region":"us"}`, perRequestMeta(""), []string{"Mcp-Param-Region", "eu"}},
	} {
		if hidden, unknown := probe("secret", p.args, p.meta, p.header...), probe("nosuch", p.args, p.meta, p.header...); hidden != unknown {
			t.Errorf("%s: a hidden tool's is answered %s\nan unknown tool's %s", what, hidden, unknown)
		}
	}
}
