package codemode

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// API is the code view of a list of tools: which function of which
// namespace calls which tool, and the declaration a model reads. It is
// immutable and safe for concurrent use.
type API struct {
	spaces  []*namespace          // by name
	byName  map[string]*function  // by public tool name
	byIdent map[string]*namespace // by namespace name
}

// namespace is one server's tools.
type namespace struct {
	name   string
	server string      // "" for the tools of none
	funcs  []*function // by name
}

// renamed returns the server's name when its namespace is not the one its
// name sanitizes to (another server's took it), for a reader to tell the
// two apart; else "".
func (s *namespace) renamed() string {
	if s.name == namespaceOf(s.server) {
		return ""
	}
	return s.server
}

// function is one tool as a program calls it.
type function struct {
	ns, name string
	tool     tool.Tool
}

// NewAPI returns the API of tools (a registry view's list). Names are
// settled in the order of the tools' public names, so the same catalog
// always gets the same API: when two tools of a namespace would have the
// same function name, the one whose public name sorts later gets "_2"
// (then "_3", …). Servers whose names sanitize alike get a namespace each
// (see namespaces).
func NewAPI(tools []tool.Tool) *API {
	sorted := slices.SortedFunc(slices.Values(tools), func(a, b tool.Tool) int { return strings.Compare(a.Name, b.Name) })
	servers := make([]string, len(sorted))
	fns := make([]string, len(sorted))
	for i, t := range sorted {
		servers[i], fns[i] = placeOf(t.Name, t.Origin.Server, t.Origin.Name)
	}
	names := namespaces(servers)
	a := &API{byName: map[string]*function{}, byIdent: map[string]*namespace{}}
	taken := map[string]map[string]bool{}
	for i, t := range sorted {
		ns := names[servers[i]]
		space := a.byIdent[ns]
		if space == nil {
			space = &namespace{name: ns, server: servers[i]}
			a.byIdent[ns] = space
			a.spaces = append(a.spaces, space)
			taken[ns] = map[string]bool{}
		}
		f := &function{ns: ns, name: unique(fns[i], taken[ns]), tool: t}
		space.funcs = append(space.funcs, f)
		a.byName[t.Name] = f
	}
	slices.SortFunc(a.spaces, func(x, y *namespace) int { return strings.Compare(x.name, y.name) })
	for _, s := range a.spaces {
		slices.SortFunc(s.funcs, func(x, y *function) int { return strings.Compare(x.name, y.name) })
	}
	return a
}

// preamble declares what every declaration refers to.
const preamble = `/** What every tool call resolves to. */
interface ToolResult<T = unknown> {
  /** The text of the result's content blocks, joined with newlines. */
  text: string;
  /** The structured result (structuredContent), when the tool gives one. */
  structured?: T;
  /** True when the tool failed; text says why. */
  isError: boolean;
  /** The content blocks as the tool sent them (text, image, resource, …). */
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
}
/** Waits ms milliseconds (bounded by the program's time). */
declare function sleep(ms: number): Promise<void>;
`

// callDecl declares tools.call.
const callDecl = `  /** Calls a tool by its public name. */
  function call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
`

// Declaration returns the TypeScript declaration of every tool: what a
// model reads to write a program for a small catalog.
func (a *API) Declaration() string {
	var b strings.Builder
	b.WriteString(preamble)
	b.WriteString("declare namespace tools {\n")
	b.WriteString(callDecl)
	for _, s := range a.spaces {
		s.write(&b)
	}
	b.WriteString("}\n")
	return b.String()
}

// Namespace returns the declaration of the namespace called name (as
// Namespaces lists it), for a model that asked for it; the ToolResult it
// refers to is in Namespaces' page.
func (a *API) Namespace(name string) (string, error) {
	s := a.byIdent[name]
	if s == nil {
		return "", fmt.Errorf("no namespace %q: the namespaces are %s", name, strings.Join(a.Names(), ", "))
	}
	var b strings.Builder
	b.WriteString("declare namespace tools {\n")
	s.write(&b)
	b.WriteString("}\n")
	return b.String(), nil
}

// Names returns the namespaces' names, sorted.
func (a *API) Names() []string {
	out := make([]string, len(a.spaces))
	for i, s := range a.spaces {
		out[i] = s.name
	}
	return out
}

// pageWidth is about how long one line of the namespaces page may grow.
const pageWidth = 120

// Namespaces returns the first page of a progressive description: the
// preamble, then one line per namespace with its number of tools and as
// many of their names as fit.
func (a *API) Namespaces() string {
	var b strings.Builder
	b.WriteString(preamble)
	fmt.Fprintf(&b, "// tools.call(publicName, args) calls any tool. %d namespaces; ask for one's declaration by name, then call tools.<namespace>.<tool>(args):\n", len(a.spaces))
	for _, s := range a.spaces {
		line := fmt.Sprintf("// %s (%d): ", s.name, len(s.funcs))
		if server := s.renamed(); server != "" {
			line = fmt.Sprintf("// %s (server %q, %d): ", s.name, server, len(s.funcs))
		}
		for i, f := range s.funcs {
			next := f.name
			if i > 0 {
				next = ", " + next
			}
			if len(line)+len(next) > pageWidth && i > 0 {
				line += ", …"
				break
			}
			line += next
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Declare returns the declaration of the tools named (public names) and
// only them, under the names the whole API gives them: what a search
// answers. Names the API does not have are left out.
func (a *API) Declare(public ...string) string {
	var b strings.Builder
	b.WriteString("declare namespace tools {\n")
	for _, s := range a.spaces {
		part := &namespace{name: s.name, server: s.server}
		for _, f := range s.funcs {
			if slices.Contains(public, f.tool.Name) {
				part.funcs = append(part.funcs, f)
			}
		}
		if len(part.funcs) > 0 {
			part.write(&b)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// write appends the namespace's declaration (inside `tools`).
func (s *namespace) write(b *strings.Builder) {
	named := newNamedTypes()
	var fns strings.Builder
	for _, f := range s.funcs {
		f.write(&fns, named)
	}
	if server := s.renamed(); server != "" {
		b.WriteString(docComment(fmt.Sprintf("Server %q.", server), "  "))
	}
	b.WriteString("  namespace " + s.name + " {\n")
	for _, n := range named.order {
		b.WriteString("    type " + n + " = " + named.body[n] + ";\n")
	}
	b.WriteString(fns.String())
	b.WriteString("  }\n")
}

// write appends the function's declaration, its named types to named.
func (f *function) write(b *strings.Builder, named *namedTypes) {
	const indent = "    "
	b.WriteString(docComment(f.tool.Description, indent))
	in := named.forTool(f.tool.InputSchema)
	args := in.typeOf(f.tool.InputSchema, indent, 0)
	if args == "unknown" {
		args = "Record<string, unknown>"
	}
	param := "args?: "
	if hasRequired(f.tool.InputSchema) {
		param = "args: "
	}
	result := "ToolResult"
	if len(f.tool.OutputSchema) > 0 {
		out := named.forTool(f.tool.OutputSchema)
		result = "ToolResult<" + out.typeOf(f.tool.OutputSchema, indent, 0) + ">"
	}
	b.WriteString(indent + "function " + f.name + "(" + param + args + "): Promise<" + result + ">;\n")
}

// hasRequired reports whether an input schema requires a property, so
// that the args may not be left out.
func hasRequired(raw json.RawMessage) bool {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(raw, &s)
	return len(s.Required) > 0
}

// lookup returns the function calling the tool named public, nil when the
// API has none.
func (a *API) lookup(public string) *function { return a.byName[public] }
