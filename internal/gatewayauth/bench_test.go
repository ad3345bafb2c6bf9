package gatewayauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// BenchmarkEnter is what the Keeper adds to one HTTP tools/call: the
// request's authentication, Enter (token, 100 rules, rate limit) and the
// end of the call (its audit line), with and without an audit trail.
func BenchmarkEnter(b *testing.B) {
	is := mcptest.NewIssuer(b)
	const aud = "https://mcp.bench.example/mcp"
	for _, trail := range []bool{false, true} {
		b.Run(fmt.Sprintf("audit=%v", trail), func(b *testing.B) {
			var src strings.Builder
			fmt.Fprintf(&src, "auth: {issuer: %q, audience: %q}\npolicy:\n", is.URL(), aud)
			for i := range 99 {
				fmt.Fprintf(&src, "  - {groups: [team%d], allow: [\"mcp__x%d__*\"]}\n", i, i)
			}
			src.WriteString("  - {groups: [benchers], allow: [\"mcp__bench__*\"]}\n")
			if trail {
				fmt.Fprintf(&src, "audit: {file: %q, args: keys}\n", filepath.Join(b.TempDir(), "audit.jsonl"))
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(src.String()), &n); err != nil {
				b.Fatal(err)
			}
			cfg, err := Decode(n.Content[0], nil)
			if err != nil {
				b.Fatal(err)
			}
			k := NewKeeper(Options{})
			if err := k.Apply(b.Context(), cfg, nil); err != nil {
				b.Fatal(err)
			}
			defer k.Clear(k.Current())
			tok := is.Sign(b, is.Claims("bench", aud, jwt.MapClaims{"groups": []string{"benchers"}}))
			r, _ := http.NewRequest(http.MethodPost, aud, nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			call := gateway.Call{Tool: "mcp__bench__echo", Public: "mcp__bench__echo", Session: "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", Client: "bench",
				Header: r.Header, Arguments: json.RawMessage(`{"text":"hello"}`)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Authenticate(r); err != nil {
					b.Fatal(err)
				}
				_, ended, err := k.Enter(b.Context(), call)
				if err != nil {
					b.Fatal(err)
				}
				ended(gateway.Outcome{})
			}
		})
	}
}
