package codemode_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", name, d)
	}
}

// catalog is a set of tools whose schemas use what a declaration renders:
// nested objects, arrays, enums, unions, optional and required fields,
// local $refs (one recursive), an output schema, names to sanitize and
// names that collide.
func catalog() []tool.Tool {
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	mk := func(server, raw, desc, in, out string) tool.Tool {
		name := raw
		if server != "" {
			name = "mcp__" + server + "__" + raw
		}
		t := tool.Tool{Name: name, Description: desc, Execute: noop, Origin: tool.Origin{Server: server, Name: raw}}
		if in != "" {
			t.InputSchema = json.RawMessage(in)
		}
		if out != "" {
			t.OutputSchema = json.RawMessage(out)
		}
		return t
	}
	return []tool.Tool{
		mk("github", "create_issue", "Create a new issue in a GitHub repository.", `{
			"type": "object",
			"properties": {
				"owner": {"type": "string", "description": "Repository owner"},
				"repo": {"type": "string"},
				"title": {"type": "string"},
				"labels": {"type": "array", "items": {"type": "string"}, "description": "Labels to add"},
				"state": {"type": "string", "enum": ["open", "closed"]},
				"milestone": {"type": ["number", "null"]},
				"assignee": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
			},
			"required": ["owner", "repo", "title"]
		}`, `{"type":"object","properties":{"number":{"type":"integer"},"url":{"type":"string"}},"required":["number","url"]}`),
		mk("github", "search", "Search code.\nThe query uses GitHub's syntax; a comment ends with */ in C.", `{
			"type": "object",
			"properties": {"q": {"type": "string", "description": "The query */ with a comment end"}, "page-size": {"type": "integer", "minimum": 1}},
			"required": ["q"]
		}`, ""),
		mk("memory", "create_entities", "Create entities in the knowledge graph.", `{
			"type": "object",
			"$defs": {
				"Entity": {"type": "object", "properties": {"name": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}, "children": {"type": "array", "items": {"$ref": "#/$defs/Entity"}}}, "required": ["name"]},
				"Kind": {"oneOf": [{"const": "person"}, {"const": "place"}, {"type": "object", "properties": {"other": {"type": "string"}}, "additionalProperties": false}]}
			},
			"properties": {"entities": {"type": "array", "items": {"$ref": "#/$defs/Entity"}}, "kind": {"$ref": "#/$defs/Kind"}, "meta": {"type": "object", "additionalProperties": {"type": "number"}}, "remote": {"$ref": "https://example.com/schema.json"}},
			"required": ["entities"]
		}`, ""),
		mk("my-server", "get.thing", "Dots and dashes become underscores.", `{"type":"object","properties":{"id":{"type":"string"}}}`, ""),
		mk("my-server", "get-thing", "Collides with get.thing once sanitized.", "", ""),
		mk("2fa", "verify", "A server name starting with a digit.", `{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{6}$"}},"required":["code"]}`, ""),
		mk("call", "ring", "A server named like tools.call.", "", ""),
		mk("", "local_clock", "A tool written in Go, with no server.", `{"type":"object","properties":{"tz":{"allOf":[{"type":"string"},{"minLength":1}]}}}`, ""),
	}
}

func TestDeclarationGolden(t *testing.T) {
	api := codemode.NewAPI(catalog())
	golden(t, "declaration.d.ts", api.Declaration())
	golden(t, "namespaces.txt", api.Namespaces())
	ns, err := api.Namespace("memory")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "namespace_memory.d.ts", ns)
}

func TestDeclarationIsStable(t *testing.T) {
	tools := catalog()
	want := codemode.NewAPI(tools).Declaration()
	for i, j := 0, len(tools)-1; i < j; i, j = i+1, j-1 {
		tools[i], tools[j] = tools[j], tools[i]
	}
	if got := codemode.NewAPI(tools).Declaration(); got != want {
		t.Errorf("the declaration depends on the order of the tools:\n%s", cmp.Diff(want, got))
	}
}

func TestNamespaceUnknown(t *testing.T) {
	_, err := codemode.NewAPI(catalog()).Namespace("gitlab")
	if err == nil || !strings.Contains(err.Error(), `no namespace "gitlab"`) || !strings.Contains(err.Error(), "github") {
		t.Errorf("error = %v, want one naming the namespace asked for and the ones there are", err)
	}
}

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{
		"create_issue": "create_issue",
		"get-thing":    "get_thing",
		"get.thing":    "get_thing",
		"2fa":          "_2fa",
		"$ok":          "$ok",
		"émoji✓":       "_moji_",
		"":             "_",
	} {
		if got := codemode.Ident(in); got != want {
			t.Errorf("Ident(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProgramCallsTheDeclaredNames runs, for every function the
// declaration names, a program calling it by that name, so that the
// declaration and the runtime cannot drift apart.
func TestProgramCallsTheDeclaredNames(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(catalog()...); err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{
		"tools.github.create_issue", "tools.github.search", "tools.memory.create_entities", "tools.my_server.get_thing",
		"tools.my_server.get_thing_2", "tools._2fa.verify", "tools.call_.ring", "tools.local.local_clock",
	} {
		if !strings.Contains(codemode.NewAPI(reg.List()).Declaration(), "function "+call[strings.LastIndexByte(call, '.')+1:]+"(") {
			t.Errorf("the declaration has no %s", call)
		}
		res, err := codemode.Run(t.Context(), codemode.RegistryView(reg), "return (await "+call+"({})).isError", codemode.Options{})
		if err != nil || string(res.Value) != "false" {
			t.Errorf("%s: %s, %v", call, res.Value, err)
		}
	}
}

// Two servers whose names sanitize alike (a-b, a_b) keep a namespace each:
// the one whose name is an identifier keeps it, the other gets "_2", named
// in the declaration; each namespace calls its own server's tools.
func TestServersThatSanitizeAlike(t *testing.T) {
	reg := tool.NewRegistry()
	for _, server := range []string{"a-b", "a_b", "local"} {
		if _, err := reg.Register(tool.Tool{
			Name: "mcp__" + server + "__search", Description: "Search " + server + ".", Origin: tool.Origin{Server: server, Name: "search"},
			Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
				return tool.Output{Content: []tool.Content{tool.Text(server)}}, nil
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Register(tool.Tool{Name: "clock", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text("go")}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	api := codemode.NewAPI(reg.List())
	if got, want := api.Names(), []string{"a_b", "a_b_2", "local", "local_2"}; !cmp.Equal(got, want) {
		t.Errorf("namespaces %v, want %v", got, want)
	}
	for call, want := range map[string]string{
		"tools.a_b.search": "a_b", "tools.a_b_2.search": "a-b", "tools.local.clock": "go", "tools.local_2.search": "local",
	} {
		res, err := codemode.Run(t.Context(), codemode.RegistryView(reg), "return (await "+call+"({})).text", codemode.Options{})
		if err != nil || string(res.Value) != `"`+want+`"` {
			t.Errorf("%s: %s, %v; want the tool of %s", call, res.Value, err, want)
		}
	}
	for ns, server := range map[string]string{"a_b_2": "a-b", "local_2": "local"} {
		decl, err := api.Namespace(ns)
		if err != nil || !strings.Contains(decl, `Server "`+server+`"`) {
			t.Errorf("declaration of %s does not name server %q: %v\n%s", ns, server, err, decl)
		}
		if line := `// ` + ns + ` (server "` + server + `", 1)`; !strings.Contains(api.Namespaces(), line) {
			t.Errorf("namespaces page has no %q:\n%s", line, api.Namespaces())
		}
	}
}
