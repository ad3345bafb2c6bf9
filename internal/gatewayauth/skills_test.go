package gatewayauth

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// addSkillsBackend starts the skills fixture (a real SDK server in
// memory) as the backend server of s's registry, and waits until its
// skills are registered.
func addSkillsBackend(t *testing.T, s *served, server string) {
	t.Helper()
	c, err := mcpclient.Start(mcpclient.Config{ServerName: server, Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: s.reg, NewTransport: skillpeer.NewSkills(skillpeer.SkillsOptions{}).NewTransport(t.Cleanup)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WaitReady(t.Context()); err != nil {
		t.Fatalf("%s did not start: %v", server, err)
	}
}

// rawCaller sends JSON-RPC requests to s over HTTP as a client holding
// token, on a session of its own (stateful) or one POST each
// (stateless), and returns each answer's JSON.
func rawCaller(t *testing.T, s *served, token string, stateless bool) func(method, params string) string {
	session := ""
	post := func(body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.resource(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		return http.DefaultClient.Do(req)
	}
	answer := func(body string) string {
		resp, err := post(body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if i := strings.LastIndex(string(b), "\ndata: "); i >= 0 {
			return strings.TrimSpace(string(b[i+len("\ndata: "):]))
		}
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	if !stateless {
		resp, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if session = resp.Header.Get("Mcp-Session-Id"); session == "" {
			t.Fatalf("initialize with %s: %s, no session", token, resp.Status)
		}
		answer(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	return func(method, params string) string {
		return answer(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + params + `}`)
	}
}

// Over real HTTP, stateful and stateless, a caller whose policy hides a
// server's resources probes that server's skills every way the gateway
// offers: skills/list and resources/list do not list them, the
// templates list has not the server's skill files, and skills/get,
// resources/directory/read and resources/read (of SKILL.md and of
// another file) answer exactly as for a server that does not exist. The
// caller the policy lets see them gets them all.
func TestSkillsFollowTheResourcePolicy(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			s := newServedWith(t, Options{}, stateless)
			addSkillsBackend(t, s, "docs")
			addSkillsBackend(t, s, "secret")
			s.apply(t, "auth: {tokens: {alice: ALICE, mallory: MALLORY}}\npolicy:\n"+
				"  - {subjects: [alice], allow: [\"*\"]}\n  - {subjects: [mallory], allow: [\"mcp__docs__*\"]}\n",
				map[string]string{"ALICE": "alice-token", "MALLORY": "mallory-token"})
			alice, mallory := rawCaller(t, s, "alice-token", stateless), rawCaller(t, s, "mallory-token", stateless)

			if got := alice("skills/list", `{}`); !strings.Contains(got, "skill://secret/pdf-processing/SKILL.md") {
				t.Fatalf("alice's skills/list lacks secret's skills: %s", got)
			}
			if got := alice("resources/read", `{"uri":"skill://secret/pdf-processing/SKILL.md"}`); !strings.Contains(got, `"contents"`) {
				t.Fatalf("alice's read of secret's SKILL.md: %s", got)
			}
			for _, list := range []string{"skills/list", "resources/list", "resources/templates/list"} {
				if got := mallory(list, `{}`); strings.Contains(got, "skill://secret") || !strings.Contains(got, "skill://docs") {
					t.Errorf("mallory's %s: %s\nwant docs' skills and none of secret's", list, got)
				}
			}
			for _, p := range []struct{ method, path string }{
				{"skills/get", "pdf-processing/SKILL.md"},
				{"resources/directory/read", "pdf-processing"},
				{"resources/directory/read", "pdf-processing/references"},
				{"resources/read", "pdf-processing/SKILL.md"},
				{"resources/read", "pdf-processing/references/FORMS.md"},
			} {
				ask := func(server string) string {
					uri := "skill://" + server + "/" + p.path
					return strings.ReplaceAll(mallory(p.method, `{"uri":"`+uri+`"}`), uri, "URI")
				}
				if hidden, unknown := ask("secret"), ask("nowhere"); hidden != unknown || !strings.Contains(hidden, `"error"`) {
					t.Errorf("mallory's %s of secret's %s: %s\nwant an error, as for a server that does not exist: %s", p.method, p.path, hidden, unknown)
				}
			}
		})
	}
}
