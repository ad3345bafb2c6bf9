package gatewayauth

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// publish offers server's prompt and resource.
func publish(t *testing.T, reg *tool.Registry, server string) {
	t.Helper()
	read := func(context.Context, string) (tool.ReadResult, error) {
		return tool.ReadResult{Wire: json.RawMessage(`{"contents":[{"uri":"` + server + `://a","text":"hi"}]}`)}, nil
	}
	get := func(context.Context, map[string]string) (tool.PromptResult, error) {
		return tool.PromptResult{Wire: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)}, nil
	}
	err := reg.NewSource().PublishOffer(tool.Offer{Server: server, Read: read,
		Resources: []tool.Resource{{Server: server, URI: server + "://a", Name: "a"}},
		Prompts:   []tool.Prompt{{Name: "mcp__" + server + "__summarize", Origin: tool.Origin{Server: server, Name: "summarize"}, Get: get}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Prompts and resources are screened like tools: a session lists only
// what its caller may use, and a prompt get or resource read it may not
// use is refused before the backend.
func TestPromptsAndResourcesScreened(t *testing.T) {
	s := newServed(t, Options{})
	publish(t, s.reg, "docs")
	publish(t, s.reg, "secret")
	s.apply(t, `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - groups: [readers]
    allow: ["mcp__docs__*"]
    resources: [docs]
audit: {file: DIR/audit.jsonl}
`, nil)
	bob := s.connect(t, s.is.SignEC(t, s.is.Claims("bob", s.resource(), jwt.MapClaims{"groups": []string{"readers"}})), nil)
	prompts, err := bob.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resources, err := bob.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	for _, r := range resources.Resources {
		names = append(names, r.URI)
	}
	slices.Sort(names)
	if d := cmp.Diff([]string{"docs://a", "mcp__docs__summarize"}, names); d != "" {
		t.Errorf("bob's prompts and resources (-want +got):\n%s", d)
	}
	if _, err := bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__docs__summarize"}); err != nil {
		t.Errorf("an allowed prompt: %v", err)
	}
	if _, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"}); err != nil {
		t.Errorf("an allowed resource: %v", err)
	}
	for name, err := range map[string]error{
		"prompt":   second(bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "mcp__secret__summarize"})),
		"resource": second(bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "secret://a"})),
	} {
		if we, ok := errors.AsType[*jsonrpc.Error](err); !ok || we.Code != CodeDenied {
			t.Errorf("a denied %s: %v, want code %d", name, err, CodeDenied)
		}
	}
	if data := readFile(t, auditPath(s)); !containsAll(data, `"method":"prompts/get"`, `"method":"resources/read"`, `"server":"secret"`, `"outcome":"denied"`) {
		t.Errorf("the trail lacks the prompt gets and resource reads:\n%s", data)
	}
}

func second[T any](_ T, err error) error { return err }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
