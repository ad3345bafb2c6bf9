package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// A prompts/get or resources/read the Gate refuses with ErrHidden is
// answered as one of a prompt or resource that does not exist (code,
// message and data, and on a 2026-07-28 POST its status), a skill's file
// too, so that probing them tells nothing either: the Gate's ErrHidden
// went back as it was, an internal error saying something is hidden; and
// one with a requestState the gateway never gave was refused for its
// state, where one of an item that does not exist is unknown.
func TestHiddenOffersAnsweredAsUnknown(t *testing.T) {
	offers, skills := tool.NewRegistry(), tool.NewRegistry()
	completingBackend(t, offers, "docs")
	completingBackend(t, offers, "vault")
	startSkillsBackend(t, skills, "vault")
	type probe struct{ method, hidden, unknown string }
	for _, w := range []struct {
		reg    *tool.Registry
		probes []probe
	}{
		{offers, []probe{{MethodGetPrompt, "mcp__docs__secret", "mcp__docs__nosuch"}, {MethodReadResource, "vault://a", "nosuch://a"}}},
		{skills, []probe{{MethodReadResource, "skill://vault/pdf-processing/SKILL.md", "skill://nosuch/pdf-processing/SKILL.md"}}},
	} {
		for path, open := range map[string]func(*tool.Registry, Options) func(method, name, state string) string{
			"in memory": func(reg *tool.Registry, opts Options) func(string, string, string) string {
				return inMemoryOfferProbe(connectInMemory(t, newGateway(t, reg, opts)))
			},
			"HTTP stateless, 2026-07-28": func(reg *tool.Registry, opts Options) func(string, string, string) string {
				opts.Stateless = true
				return statelessOfferProbe(t, serveHTTP(t, newGateway(t, reg, opts), opts))
			},
		} {
			get := open(w.reg, Options{Gate: hideOffers{prompt: "mcp__docs__secret", server: "vault"}})
			for _, p := range w.probes {
				for _, state := range []string{"", "mcpbridge.forged"} {
					if hidden, unknown := get(p.method, p.hidden, state), get(p.method, p.unknown, state); hidden != unknown {
						t.Errorf("%s, %s %s, requestState %q: a hidden one is answered %s\nan unknown one %s", path, p.method, p.hidden, state, hidden, unknown)
					}
				}
			}
		}
	}
}

// inMemoryOfferProbe returns how c's prompts/get or resources/read of
// name, with state unless "", is refused (code, message, data), name
// written NAME.
func inMemoryOfferProbe(c *client) func(method, name, state string) string {
	return func(method, name, state string) string {
		var err error
		if method == MethodGetPrompt {
			_, err = c.session.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, RequestState: state})
		} else {
			_, err = c.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: name, RequestState: state})
		}
		wire, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok {
			return fmt.Sprintf("not a JSON-RPC error: %v", err)
		}
		return strings.ReplaceAll(fmt.Sprintf("%d %s %s", wire.Code, wire.Message, wire.Data), name, "NAME")
	}
}

// statelessOfferProbe returns the status and body a 2026-07-28 POST to
// base of a prompts/get or resources/read of name, with state unless "",
// is answered with, name written NAME.
func statelessOfferProbe(t *testing.T, base string) func(method, name, state string) string {
	return func(method, name, state string) string {
		key := map[string]string{MethodGetPrompt: "name", MethodReadResource: "uri"}[method]
		params, _ := json.Marshal(map[string]any{key: name, "requestState": state, "_meta": json.RawMessage(`{` + perRequestMeta("") + `}`)})
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + string(params) + `}`
		status, got, _ := readStateless(t, base, body, false, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method, "Mcp-Name", name)
		return http.StatusText(status) + " " + strings.ReplaceAll(got, name, "NAME")
	}
}

// A caller whose call slots are all held by its own slow calls is
// answered for a prompt or resource hidden from it exactly as for one
// that does not exist, and a visible one still waits for a slot: the
// hidden one took a slot before the Gate hid it, so it was refused as
// too many calls where an unknown one, which the SDK answers before any
// slot, was unknown.
func TestHiddenOffersAnsweredAsUnknownWhenSlotsFull(t *testing.T) {
	reg := tool.NewRegistry()
	completingBackend(t, reg, "docs")
	completingBackend(t, reg, "vault")
	entered, release, _ := waitingTool(t, reg)
	defer close(release)
	c := connectInMemory(t, newGateway(t, reg, Options{MaxCallsPerSession: 1, Gate: hideOffers{prompt: "mcp__docs__secret", server: "vault"}}))
	go c.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait"})
	waitSignal(t, entered, "the slow call to hold the session's slot")
	get := inMemoryOfferProbe(c)
	for _, p := range []struct{ method, hidden, unknown, visible string }{
		{MethodGetPrompt, "mcp__docs__secret", "mcp__docs__nosuch", "mcp__docs__open"},
		{MethodReadResource, "vault://a", "nosuch://a", "docs://a"},
	} {
		if hidden, unknown := get(p.method, p.hidden, ""), get(p.method, p.unknown, ""); hidden != unknown {
			t.Errorf("%s with the slots full: a hidden one is answered %s\nan unknown one %s", p.method, hidden, unknown)
		}
		if visible := get(p.method, p.visible, ""); !strings.Contains(visible, "too many tool calls in flight") {
			t.Errorf("%s %s with the slots full: answered %s, want it refused for its slot", p.method, p.visible, visible)
		}
	}
}

// screenedOnly is a countingGate whose Screen hides the prompt
// mcp__docs__secret, which its Enter admits: a policy that changed
// between the two.
type screenedOnly struct{ *countingGate }

func (screenedOnly) Screen(context.Context, http.Header, string) func(Offer, string) bool {
	return func(k Offer, name string) bool { return k != OfferPrompt || name != "mcp__docs__secret" }
}

// A prompt the Screen hides stays hidden, and unserved, when the Gate's
// Enter admits it after all; the Gate is told it ended failed.
func TestHiddenOfferAdmittedAfterAllStaysHidden(t *testing.T) {
	reg := tool.NewRegistry()
	completingBackend(t, reg, "docs")
	gate := screenedOnly{newCountingGate()}
	get := inMemoryOfferProbe(connectInMemory(t, newGateway(t, reg, Options{Gate: gate})))
	if hidden, unknown := get(MethodGetPrompt, "mcp__docs__secret", ""), get(MethodGetPrompt, "mcp__docs__nosuch", ""); hidden != unknown {
		t.Errorf("a hidden prompt the Gate admits is answered %s\nan unknown one %s", hidden, unknown)
	}
	gate.expect(t, "mcp__docs__secret", counts{Entered: 1, Ended: []Outcome{{Failed: true}}})
}
