package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/callargs"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/tool"
)

// withBridge parses cmd's flags (commandSpecs), starts the servers, and
// runs fn on them with the positional arguments. A server that failed to
// start is reported and makes the exit status 1 once fn succeeded.
func (e *env) withBridge(ctx context.Context, cmd string, argv []string, fn func(b *bridge, f *flags) error) error {
	f, err := parseFlags(cmd, specOf(cmd), argv)
	if err != nil {
		return err
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	b, err := e.open(ctx, src, f)
	if err != nil {
		return err
	}
	defer b.close()
	e.reportFailures(b)
	if err := fn(b, f); err != nil {
		return err
	}
	if len(b.failed) > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// resources lists every server's resources and templates:
// `resources [SOURCE] [--json]`.
func (e *env) resources(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "resources", argv, func(b *bridge, f *flags) error {
		if len(f.args) > 0 {
			return usagef("resources: unexpected argument %q", f.args[0])
		}
		res, tpl := b.reg.Resources(), b.reg.ResourceTemplates()
		e.reportShadowed(b.reg.ShadowedResources(gatewayrun.ServerOrder(b.statuses)))
		if f.json {
			return e.printResourcesJSON(res, tpl)
		}
		w := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		for _, r := range res {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", termsafe.Line(r.Server), termsafe.Line(r.URI), termsafe.Line(cmpOr(r.Title, r.Name)), termsafe.Line(r.MIMEType))
		}
		for _, t := range tpl {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", termsafe.Line(t.Server), termsafe.Line(t.URITemplate), termsafe.Line(cmpOr(t.Title, t.Name))+" (template)", termsafe.Line(t.MIMEType))
		}
		return e.endListing(w, b, fmt.Sprintf("%d resources and %d resource templates", len(res), len(tpl)))
	})
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// printResourcesJSON prints report.Resources of res and tpl.
func (e *env) printResourcesJSON(res []tool.Resource, tpl []tool.ResourceTemplate) error {
	return writeJSON(e.Stdout, report.NewResources(res, tpl))
}

// read prints one resource: `read [SOURCE] [--json] [--server NAME] URI`.
func (e *env) read(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "read", argv, func(b *bridge, f *flags) error {
		if len(f.args) != 1 {
			return usagef("read: want one URI (see 'mcpbridge help')")
		}
		uri := f.args[0]
		e.reportShadowed(shadowedURI(b, uri))
		server, err := resourceServer(b, f.server, uri)
		if err != nil {
			return err
		}
		res, err := b.reg.ReadResource(ctx, server, uri)
		if err != nil {
			return err
		}
		if f.json {
			_, err := fmt.Fprintf(e.Stdout, "%s\n", res.Wire)
			return err
		}
		return e.printContent(res.Content)
	})
}

// resourceServer picks the server to read uri from: the one named, else
// the first in config order that lists it, else that has a matching
// template.
func resourceServer(b *bridge, named, uri string) (string, error) {
	if named != "" {
		return named, knownServer(b, named)
	}
	cands := b.reg.ResourceServers(uri)
	if len(cands) == 0 {
		return "", fmt.Errorf("no server lists the resource %q or has a template matching it (name one with --server)", uri)
	}
	return slices.MinFunc(cands, tool.ByPrecedence(gatewayrun.ServerOrder(b.statuses))), nil
}

// reportShadowed says on stderr which resources of a server are not the
// ones a reader gets, because a server earlier in the config offers the
// same URI: once for each pair of servers, with a count when there are
// more than one (two copies of a server shadow all of each other's).
func (e *env) reportShadowed(shadowed []tool.Shadowed) {
	type pair struct{ server, keptBy string }
	var order []pair
	byPair := map[pair][]tool.Shadowed{}
	for _, s := range shadowed {
		p := pair{s.Server, s.KeptBy}
		if _, ok := byPair[p]; !ok {
			order = append(order, p)
		}
		byPair[p] = append(byPair[p], s)
	}
	for _, p := range order {
		if ss := byPair[p]; len(ss) == 1 {
			fmt.Fprintf(e.Stderr, "mcpbridge: %s %q of server %q is not used: server %q offers it too and comes first in the config\n",
				ss[0].Kind, termsafe.Line(ss[0].Key), p.server, p.keptBy)
		} else {
			fmt.Fprintf(e.Stderr, "mcpbridge: %s of server %q are not used: server %q offers the same URIs and comes first in the config (status --json lists them under \"shadowed\")\n",
				shadowedCount(ss), p.server, p.keptBy)
		}
	}
}

// shadowedCount says how many resources and templates ss holds: "7
// resources and 2 resource templates".
func shadowedCount(ss []tool.Shadowed) string {
	counts := map[string]int{}
	var kinds []string
	for _, s := range ss {
		if counts[s.Kind] == 0 {
			kinds = append(kinds, s.Kind)
		}
		counts[s.Kind]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], plural(counts[k], k, k+"s")))
	}
	return strings.Join(parts, " and ")
}

// shadowedURI is what ShadowedResources says about uri.
func shadowedURI(b *bridge, uri string) []tool.Shadowed {
	var out []tool.Shadowed
	for _, s := range b.reg.ShadowedResources(gatewayrun.ServerOrder(b.statuses)) {
		if s.Key == uri {
			out = append(out, s)
		}
	}
	return out
}

// printContent prints text blocks, each on its own lines, escaped for the
// terminal.
func (e *env) printContent(content []tool.Content) error {
	for _, c := range content {
		if _, err := fmt.Fprintln(e.Stdout, termsafe.Text(c.Text)); err != nil {
			return err
		}
	}
	return nil
}

// prompts lists the prompts under their public names:
// `prompts [SOURCE] [--json]`.
func (e *env) prompts(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "prompts", argv, func(b *bridge, f *flags) error {
		if len(f.args) > 0 {
			return usagef("prompts: unexpected argument %q", f.args[0])
		}
		ps := b.reg.Prompts()
		if f.json {
			return writeJSON(e.Stdout, report.NewPrompts(ps))
		}
		w := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		for _, p := range ps {
			fmt.Fprintf(w, "%s\t%s\t%s\n", p.Name, termsafe.Line(promptArgs(p.Arguments)), termsafe.Summary(p.Description))
		}
		return e.endListing(w, b, fmt.Sprintf("%d prompts", len(ps)))
	})
}

// promptArgs shows a prompt's arguments: "(name*, style)", * for required.
func promptArgs(args []tool.PromptArgument) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
		if a.Required {
			names[i] += "*"
		}
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// prompt renders a prompt: `prompt [SOURCE] [--json] NAME [ARGS_JSON]
// [--arg K=V]...`, ARGS_JSON an object of strings.
func (e *env) prompt(ctx context.Context, argv []string) error {
	return e.withBridge(ctx, "prompt", argv, func(b *bridge, f *flags) error {
		if len(f.args) < 1 || len(f.args) > 2 {
			return usagef("prompt: want NAME [ARGS_JSON] [--arg K=V]... (see 'mcpbridge help prompt')")
		}
		args, err := promptArgsOf(b, f)
		if err != nil {
			return err
		}
		res, err := b.reg.GetPrompt(ctx, f.args[0], args)
		if errors.Is(err, tool.ErrUnknownPrompt) {
			return unknownPrompt(b, f.args[0], err)
		}
		if err != nil {
			return err
		}
		if f.json {
			_, err := fmt.Fprintf(e.Stdout, "%s\n", res.Wire)
			return err
		}
		for _, m := range res.Messages {
			for _, c := range m.Content {
				fmt.Fprintf(e.Stdout, "%s: %s\n", termsafe.Line(m.Role), termsafe.Text(c.Text))
			}
		}
		return nil
	})
}

// promptArgsOf are the arguments of prompt's line: ARGS_JSON, then each
// --arg K=V over it (nil when neither is given). A key the prompt does not
// list is refused (when the prompt is known; an unknown one gets its own
// error).
func promptArgsOf(b *bridge, f *flags) (map[string]string, error) {
	var args map[string]string
	if len(f.args) == 2 {
		var err error
		if args, err = callargs.Strings(f.args[1]); errors.As(err, new(*callargs.MistakeError)) {
			return nil, usagef("prompt: %v", err)
		} else if err != nil {
			return nil, usagef(`prompt: ARGS_JSON must be a JSON object of strings, like '{"style": "short"}' (or --arg K=V per argument): %v`, err)
		}
	}
	name := f.args[0]
	ps := b.reg.Prompts()
	i := slices.IndexFunc(ps, func(p tool.Prompt) bool { return p.Name == name })
	for _, kv := range f.callArgs {
		k, v, err := callargs.Split(kv)
		if err != nil {
			return nil, usagef("prompt: %v", err)
		}
		if i >= 0 && !slices.ContainsFunc(ps[i].Arguments, func(a tool.PromptArgument) bool { return a.Name == k }) {
			return nil, usagef("prompt: %v", callargs.Unknown(kv, name, k, promptArgNames(ps[i])))
		}
		if args == nil {
			args = map[string]string{}
		}
		args[k] = v
	}
	return args, nil
}

// promptArgNames are the names of p's arguments.
func promptArgNames(p tool.Prompt) []string {
	var out []string
	for _, a := range p.Arguments {
		out = append(out, a.Name)
	}
	return out
}

// unknownPrompt is err for a prompt name nobody offers, with the name
// meant: the one whose raw name is name, else the closest.
func unknownPrompt(b *bridge, name string, err error) error {
	var names []string
	for _, p := range b.reg.Prompts() {
		if strings.HasSuffix(p.Name, "__"+name) {
			return fmt.Errorf("%w: did you mean %s?", err, p.Name)
		}
		names = append(names, p.Name)
	}
	if m := yamlconf.Suggest(name, names); m != "" {
		return fmt.Errorf("%w: did you mean %s?", err, m)
	}
	return err
}

// knownServer checks --server NAME: a server of the config that offers
// resources. A server that exists but offers none is told apart from a
// name nobody has (which gets the name meant).
func knownServer(b *bridge, name string) error {
	var names []string
	for _, st := range b.statuses {
		if st.Name == name {
			if st.State != host.StateReady {
				return fmt.Errorf("--server %s: the server is %s: %s", name, stateText(st.State), st.Err)
			}
			if !slices.ContainsFunc(b.reg.Resources(), func(r tool.Resource) bool { return r.Server == name }) &&
				!slices.ContainsFunc(b.reg.ResourceTemplates(), func(r tool.ResourceTemplate) bool { return r.Server == name }) {
				return fmt.Errorf("--server %s: the server offers no resources", name)
			}
			return nil
		}
		names = append(names, st.Name)
	}
	if m := yamlconf.Suggest(name, names); m != "" {
		return usagef("--server %s: no such server in the config: did you mean %q?", name, m)
	}
	return usagef("--server %s: no such server in the config (servers: %s)", name, strings.Join(names, ", "))
}
