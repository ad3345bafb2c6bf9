package gatewayauth

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/gateway"
)

// A caller the policy denies, or one the Gate cannot authenticate (a
// gateway whose HTTP edge leaves authentication to its Gate), gets the
// same answer for a tool, prompt or resource that exists as for one that
// does not, whatever else refuses the request: with the audit trail
// unwritable, the denied ones were answered -32032 "cannot write its
// audit trail" and the missing ones unknown, and an unauthenticated
// caller got -32030 for the ones that exist. The denials are audited
// while the trail can be written.
func TestHiddenItemsAnsweredAsMissingWhateverRefusesThem(t *testing.T) {
	s := newServed(t, Options{})
	publish(t, s.reg, "docs")
	publish(t, s.reg, "secret")
	if err := os.Mkdir(filepath.Join(s.dir, "trail"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.apply(t, `
auth: {tokens: {alice: A_TOKEN, eve: E_TOKEN}}
policy:
  - subjects: [alice]
    allow: ["mcp__docs__*", "mcp__time__*"]
    resources: [docs]
  - subjects: [eve]
    allow: ["mcp__time__*"]
audit: {file: DIR/trail/audit.jsonl}
`, map[string]string{"A_TOKEN": "a", "E_TOKEN": "e"})
	edgeless := gateway.New(s.reg, gateway.Options{Gate: s.keeper})
	srv := httptest.NewServer(edgeless.Handler())
	t.Cleanup(func() { srv.Close(); edgeless.Close() })
	connect := func(token string) *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "1"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	callers := map[string]*mcp.ClientSession{
		"eve, denied":              s.connect(t, "e", nil),
		"a token no one was given": connect("guessed"),
	}
	probe := func(when string) {
		for who, cs := range callers {
			t.Run(when+", "+who, func(t *testing.T) {
				checkHidden(t, cs, "mcp__github__delete_repo")
				checkOffersHidden(t, cs, "mcp__secret__summarize", "secret://a")
			})
		}
	}
	probe("trail writable")
	trail := readFile(t, filepath.Join(s.dir, "trail", "audit.jsonl"))
	for _, outcome := range []string{"denied", "unauthenticated"} {
		for _, method := range []string{"tools/call", "prompts/get", "resources/read"} {
			if !strings.Contains(trail, `"method":"`+method+`"`) || strings.Count(trail, `"outcome":"`+outcome+`"`) != 3 {
				t.Errorf("the trail lacks the %s %s refusal:\n%s", outcome, method, trail)
			}
		}
	}

	if err := os.RemoveAll(filepath.Join(s.dir, "trail")); err != nil {
		t.Fatal(err)
	}
	alice := s.connect(t, "a", nil)
	if code, err := callCode(t, alice, "mcp__time__now"); code != CodeUnaudited {
		t.Fatalf("a call with the trail's directory removed: %d %v, want %d", code, err, CodeUnaudited)
	}
	probe("trail unwritable")
}
