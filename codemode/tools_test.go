package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// gated is a view whose calls pass a gate, as a gateway's do: it refuses
// one tool and writes an audit line per call, naming who called.
type gated struct {
	codemode.View
	denied string

	mu    sync.Mutex
	audit []string
}

type callerKey struct{}

func (g *gated) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	who, _ := ctx.Value(callerKey{}).(string)
	verdict := "allow"
	if name == g.denied {
		verdict = "deny"
	}
	g.mu.Lock()
	g.audit = append(g.audit, fmt.Sprintf("%s %s %s", who, name, verdict))
	g.mu.Unlock()
	if verdict == "deny" {
		return tool.Result{IsError: true, Content: []tool.Content{tool.Text("Error: refused by policy: " + name)}}, nil
	}
	return g.View.Call(ctx, name, args)
}

// codeRegistry is a registry holding only the code mode tools over view,
// as an agent's or a gateway's would.
func codeRegistry(t *testing.T, view codemode.View) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	if _, err := reg.Register(codemode.Tools(view, codemode.Options{})...); err != nil {
		t.Fatal(err)
	}
	return reg
}

func execute(t *testing.T, ctx context.Context, reg *tool.Registry, name, args string) tool.Result {
	t.Helper()
	res, err := reg.Execute(ctx, name, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunCodeInnerCallsPassTheGate(t *testing.T) {
	f := newFixture(t)
	view := &gated{View: codemode.RegistryView(f.reg), denied: "mcp__vault__secret"}
	reg := codeRegistry(t, view)
	ctx := context.WithValue(t.Context(), callerKey{}, "alice")
	res := execute(t, ctx, reg, codemode.RunName, `{"code": "const [a, s] = await Promise.all([tools.calc.add({a: 2, b: 3}), tools.vault.secret()]);\nconsole.log(s.text);\nreturn {sum: a.structured.sum, denied: s.isError}"}`)
	if res.IsError {
		t.Fatalf("run_code failed: %s", res.Text())
	}
	if want := "Error: refused by policy: mcp__vault__secret\n{\"sum\":5,\"denied\":true}"; res.Text() != want {
		t.Errorf("run_code answered %q, want %q", res.Text(), want)
	}
	view.mu.Lock()
	defer view.mu.Unlock()
	got := strings.Join(view.audit, "; ")
	if !strings.Contains(got, "alice mcp__calc__add allow") || !strings.Contains(got, "alice mcp__vault__secret deny") || len(view.audit) != 2 {
		t.Errorf("audit = %q, want one line per inner call, each with the caller", got)
	}
}

func TestRunCodeFailureSaysWhereAndKeepsTheLogs(t *testing.T) {
	f := newFixture(t)
	reg := codeRegistry(t, codemode.RegistryView(f.reg))
	res := execute(t, t.Context(), reg, codemode.RunName, `{"code": "console.log('step 1');\nnope();"}`)
	for _, want := range []string{"line 2, column ", "ReferenceError", "logged before it failed:\nstep 1"} {
		if !res.IsError || !strings.Contains(res.Text(), want) {
			t.Errorf("run_code answered %q (isError %v), want it to say %q", res.Text(), res.IsError, want)
		}
	}
	res = execute(t, t.Context(), reg, codemode.RunName, `{"code": "const x: number = 1; return x"}`)
	if !res.IsError || !strings.Contains(res.Text(), "line 1, column 8") || !strings.Contains(res.Text(), "no type annotations") {
		t.Errorf("a TypeScript program: %q", res.Text())
	}
	res = execute(t, t.Context(), reg, codemode.RunName, `{"code": ""}`)
	if !res.IsError || !strings.Contains(res.Text(), `"code" is empty`) {
		t.Errorf("an empty program: %q", res.Text())
	}
}

func TestDescribeAndSearchAPI(t *testing.T) {
	f := newFixture(t)
	reg := codeRegistry(t, codemode.RegistryView(f.reg))
	page := execute(t, t.Context(), reg, codemode.DescribeName, `{}`).Text()
	if !strings.Contains(page, "// calc (1): add") || !strings.Contains(page, "// text (2): count, echo") {
		t.Errorf("describe_api without a namespace:\n%s", page)
	}
	ns := execute(t, t.Context(), reg, codemode.DescribeName, `{"namespace": "calc"}`).Text()
	if !strings.Contains(ns, "namespace calc {") || !strings.Contains(ns, "function add(args: {") || strings.Contains(ns, "echo") {
		t.Errorf("describe_api calc:\n%s", ns)
	}
	bad := execute(t, t.Context(), reg, codemode.DescribeName, `{"namespace": "nope"}`)
	if !bad.IsError || !strings.Contains(bad.Text(), `no namespace "nope"`) {
		t.Errorf("describe_api nope: %q", bad.Text())
	}
	found := execute(t, t.Context(), reg, codemode.SearchName, `{"query": "add two numbers", "limit": 1}`).Text()
	if !strings.Contains(found, "namespace calc {") || !strings.Contains(found, "function add(") || strings.Contains(found, "namespace text") {
		t.Errorf("search_api:\n%s", found)
	}
}

// search_api refuses a query longer than a request for a tool, as
// search_tools does: each search analyses the whole query, and a
// gateway's client may send megabytes.
func TestSearchAPIQueryBound(t *testing.T) {
	f := newFixture(t)
	reg := codeRegistry(t, codemode.RegistryView(f.reg))
	long := "add two numbers " + strings.Repeat("x", toolsearch.MaxQueryBytes-len("add two numbers "))
	if res := execute(t, t.Context(), reg, codemode.SearchName, `{"query": "`+long+`", "limit": 1}`); res.IsError || !strings.Contains(res.Text(), "function add(") {
		t.Errorf("a query of MaxQueryBytes: %s", res.Text())
	}
	res := execute(t, t.Context(), reg, codemode.SearchName, `{"query": "`+long+`x"}`)
	if want := fmt.Sprintf(`"query" is %d bytes`, toolsearch.MaxQueryBytes+1); !res.IsError || !strings.Contains(res.Text(), want) || !strings.Contains(res.Text(), "at most 4096 bytes") {
		t.Errorf("a query of MaxQueryBytes+1 answered %q (isError %v), want it refused saying %q", res.Text(), res.IsError, want)
	}
}

// byCaller is a CallerView that hides vault's tools from every caller but
// "root" (the caller in the context), and records the calls it is asked.
type byCaller struct {
	codemode.View

	mu    sync.Mutex
	calls []string
}

func (v *byCaller) ToolsFor(ctx context.Context) ([]tool.Tool, error) {
	all, err := v.View.Tools()
	if who, _ := ctx.Value(callerKey{}).(string); who == "root" {
		return all, err
	}
	return slices.DeleteFunc(all, func(t tool.Tool) bool { return strings.HasPrefix(t.Name, "mcp__vault__") }), err
}

func (v *byCaller) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	v.mu.Lock()
	v.calls = append(v.calls, name)
	v.mu.Unlock()
	if t, _ := v.ToolsFor(ctx); !slices.ContainsFunc(t, func(t tool.Tool) bool { return t.Name == name }) {
		return tool.Result{}, fmt.Errorf("unknown tool %q", name)
	}
	return v.View.Call(ctx, name, args)
}

// A CallerView's tools are what each caller's program and API hold; with
// CallUnlisted, tools.call of a name outside them reaches the view, which
// refuses it (a gateway's Gate records it so).
func TestCallerViewAndCallUnlisted(t *testing.T) {
	f := newFixture(t)
	view := &byCaller{View: codemode.RegistryView(f.reg)}
	reg := tool.NewRegistry()
	if _, err := reg.Register(codemode.Tools(view, codemode.Options{CallUnlisted: true})...); err != nil {
		t.Fatal(err)
	}
	alice := context.WithValue(t.Context(), callerKey{}, "alice")
	if page := execute(t, alice, reg, codemode.DescribeName, `{}`).Text(); strings.Contains(page, "vault") {
		t.Errorf("alice's API names vault:\n%s", page)
	}
	if page := execute(t, context.WithValue(t.Context(), callerKey{}, "root"), reg, codemode.DescribeName, `{}`).Text(); !strings.Contains(page, "// vault (1): secret") {
		t.Errorf("root's API lacks vault:\n%s", page)
	}
	res := execute(t, alice, reg, codemode.RunName, `{"code": "let e = ''; try { await tools.call('mcp__vault__secret') } catch (x) { e = String(x) }\nreturn {e, ns: typeof tools.vault}"}`)
	if !strings.Contains(res.Text(), `unknown tool \"mcp__vault__secret\"`) || !strings.Contains(res.Text(), `"ns":"undefined"`) {
		t.Errorf("alice's program: %s", res.Text())
	}
	if d := cmp.Diff([]string{"mcp__vault__secret"}, view.calls); d != "" {
		t.Errorf("calls the view was asked (-want +got):\n%s", d)
	}
}
