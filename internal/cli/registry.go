package cli

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	"github.com/mcpbridge/mcpbridge/internal/registry"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

const registryHelp = `Reads the MCP Registry: $MCPBRIDGE_REGISTRY_URL, default the official one
(https://registry.modelcontextprotocol.io), API /v0.1. Answers are kept under the user cache
directory ($XDG_CACHE_HOME/mcpbridge/registry) and revalidated with their ETag.
  search QUERY        the servers whose name contains QUERY: name, version, description
  show NAME[@VERSION] one server: its packages and remotes, numbered as add takes them, what
                      each runs and the variables each needs
  outdated [SOURCE]   each configured entry added from the registry, and whether a newer version
                      is published (exit 1 when one could not be checked)
  --json              search and show: the registry's answers; outdated: [{id, name, version,
                      latest, outdated, error}]
'mcpbridge help add' tells how to add a server the registry lists.
`

// searchLimit is how many servers registry search shows.
const searchLimit = 50

// registryCmd runs "registry search|show|outdated".
func (e *env) registryCmd(ctx context.Context, argv []string) error {
	subs := map[string]func(*env, context.Context, []string) error{
		"search": (*env).registrySearch, "show": (*env).registryShow, "outdated": (*env).registryOutdated,
	}
	// The subcommand is the first word that names one, so that flags may
	// stand before it (registry --json search x).
	for i, a := range argv {
		if run, ok := subs[a]; ok {
			return run(e, ctx, slices.Concat(argv[:i], argv[i+1:]))
		}
		if !strings.HasPrefix(a, "-") {
			if near := yamlconf.Suggest(a, slices.Collect(maps.Keys(subs))); near != "" {
				return usagef("registry: unknown subcommand %q: did you mean %q? (want search, show or outdated)", a, near)
			}
			return usagef("registry: unknown subcommand %q: want search, show or outdated", a)
		}
	}
	return usagef("registry: want search QUERY, show NAME[@VERSION] or outdated [SOURCE] (see 'mcpbridge help registry')")
}

// registryClient is the client of the registry the environment names.
func (e *env) registryClient() (*registry.Client, error) {
	c, err := registry.FromEnv(e.getenv)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

func (e *env) registrySearch(ctx context.Context, argv []string) error {
	f, err := parseFlags("registry search", flagSpec{json: true}, argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("registry search: want QUERY (a part of the server's name), got %d arguments", len(f.args))
	}
	c, err := e.registryClient()
	if err != nil {
		return err
	}
	found, err := c.Search(ctx, f.args[0], searchLimit)
	if err != nil {
		return fmt.Errorf("registry search: %w", err)
	}
	if f.json {
		return writeJSON(e.Stdout, found)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	for _, r := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(r.Server.Name), termsafe.Line(r.Server.Version), termsafe.Summary(r.Server.Description))
	}
	tw.Flush()
	more := ""
	if len(found) == searchLimit {
		more = " (the first ones; a longer QUERY narrows it)"
	}
	noun := "servers"
	if len(found) == 1 {
		noun = "server"
	}
	fmt.Fprintf(e.Stderr, "%d %s%s\n", len(found), noun, more)
	return nil
}

// prefixed is s after sep, or "" when s is.
func prefixed(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

func (e *env) registryShow(ctx context.Context, argv []string) error {
	f, err := parseFlags("registry show", flagSpec{json: true}, argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("registry show: want NAME[@VERSION], got %d arguments", len(f.args))
	}
	resp, err := e.fetchServer(ctx, "registry show", f.args[0])
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(e.Stdout, resp)
	}
	writeServer(e, resp.Server, addRef(f.args[0], resp.Server))
	if o := resp.Meta.Official; o != nil && o.Status != "" && o.Status != "active" {
		fmt.Fprintf(e.Stdout, "The registry marks this version %s%s\n", termsafe.Line(o.Status), termsafe.Line(prefixed(": ", o.StatusMessage)))
	}
	return nil
}

// fetchServer reads NAME[@VERSION] from the registry, or a server.json
// file (a path: it has no registry's name form).
func (e *env) fetchServer(ctx context.Context, cmd, ref string) (registry.Response, error) {
	if registry.IsFile(ref) {
		resp, err := registry.ReadFile(ref)
		if err != nil {
			return registry.Response{}, usagef("%s: %v", cmd, err)
		}
		return resp, nil
	}
	name, version := registry.SplitRef(ref)
	c, err := e.registryClient()
	if err != nil {
		return registry.Response{}, err
	}
	resp, err := c.Get(ctx, name, version)
	if err != nil {
		return registry.Response{}, fmt.Errorf("%s: %w", cmd, err)
	}
	return resp, nil
}

// addRef is what add's --from-registry takes for the server shown from
// ref: the file itself when ref is one (it may be in no registry), else
// the name and version shown.
func addRef(ref string, s registry.Server) string {
	if registry.IsFile(ref) {
		return termsafe.Line(shellQuote(ref))
	}
	return termsafe.Line(s.Name) + "@" + termsafe.Line(s.Version)
}

// writeServer prints a server.json for a person: what it is, then each
// way to run it, numbered as add's --package and --remote take them, and
// the add command for it (add, its --from-registry argument: addOffer).
func writeServer(e *env, s registry.Server, add string) {
	w := e.Stdout
	fmt.Fprintf(w, "%s %s\n", termsafe.Line(s.Name), termsafe.Line(s.Version))
	for _, line := range []struct{ label, v string }{{"title", s.Title}, {"description", s.Description}, {"website", s.WebsiteURL}} {
		if line.v != "" {
			fmt.Fprintf(w, "  %s: %s\n", line.label, termsafe.Line(line.v))
		}
	}
	if s.Repository != nil && s.Repository.URL != "" {
		sub := ""
		if s.Repository.Subfolder != "" {
			sub = " (in " + s.Repository.Subfolder + ")"
		}
		fmt.Fprintf(w, "  repository: %s\n", termsafe.Line(s.Repository.URL+sub))
	}
	for i, p := range s.Packages {
		fmt.Fprintf(w, "package %d (--package %s): %s, %s\n", i+1, termsafe.Line(p.RegistryType), termsafe.Line(strings.TrimSpace(p.Identifier+" "+p.Version)), termsafe.Line(p.Transport.Type))
		writeRunnable(e, s, registry.Choice{Package: p.RegistryType}, i == firstOfType(s, p.RegistryType))
	}
	for i, r := range s.Remotes {
		fmt.Fprintf(w, "remote %d (--remote %d): %s %s\n", i+1, i+1, termsafe.Line(r.Type), termsafe.Line(r.URL))
		writeRunnable(e, s, registry.Choice{Remote: i + 1}, true)
	}
	fmt.Fprintln(w, addOffer(s, add))
}

// addOffer is the add command that writes s (add, its --from-registry
// argument): bare when add's own choice works, else with the first
// --package or --remote that does; or, when none does, why show offers
// none: a command it printed would only fail.
func addOffer(s registry.Server, add string) string {
	_, err := registry.Build(s, registry.Choice{})
	if err == nil {
		return "Add it: mcpbridge add --from-registry " + add
	}
	if ok := addable(s); len(ok) > 0 {
		return "Add it: mcpbridge add --from-registry " + add + " " + ok[0].flag
	}
	if len(s.Packages)+len(s.Remotes) > 0 {
		return "mcpbridge cannot add it: none of its packages and remotes can be added (each says why above)"
	}
	return "mcpbridge cannot add it: " + termsafe.Line(err.Error())
}

// addable are the choices of s that add builds an entry of.
func addable(s registry.Server) []addChoice {
	var out []addChoice
	for _, c := range choices(s) {
		if _, err := registry.Build(s, c.choice); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// addChoice is a choice of add --from-registry and its flag.
type addChoice struct {
	choice registry.Choice
	flag   string
}

// choices are the choices add takes of s: each package type (its first
// package), then each remote.
func choices(s registry.Server) []addChoice {
	var out []addChoice
	for i, p := range s.Packages {
		if i == firstOfType(s, p.RegistryType) {
			out = append(out, addChoice{registry.Choice{Package: p.RegistryType}, "--package " + termsafe.Line(shellQuote(p.RegistryType))})
		}
	}
	for i := range s.Remotes {
		out = append(out, addChoice{registry.Choice{Remote: i + 1}, "--remote " + strconv.Itoa(i+1)})
	}
	return out
}

func firstOfType(s registry.Server, t string) int {
	for i, p := range s.Packages {
		if p.RegistryType == t {
			return i
		}
	}
	return -1
}

// writeRunnable prints what add writes for choice: the command or URL
// and the notes, or why it cannot; only for the first package of a type,
// which is the one --package takes.
func writeRunnable(e *env, s registry.Server, choice registry.Choice, chosen bool) {
	if !chosen {
		t := termsafe.Line(choice.Package)
		fmt.Fprintf(e.Stdout, "    (--package %s takes the first %s package)\n", t, t)
		return
	}
	entry, err := registry.Build(s, choice)
	if err != nil {
		fmt.Fprintf(e.Stdout, "    not added by mcpbridge: %s\n", termsafe.Line(err.Error()))
		return
	}
	if line := entry.CommandLine(); line != "" {
		fmt.Fprintf(e.Stdout, "    runs: %s\n", termsafe.Line(line))
	}
	for _, n := range entry.Notes {
		fmt.Fprintf(e.Stdout, "    %s\n", termsafe.Line(n))
	}
}

// addFromRegistry is add --from-registry: the entry made of a registry
// server (or a server.json file, offline), written as add writes any.
func (e *env) addFromRegistry(ctx context.Context, f *flags) error {
	if err := checkRegistryAdd(f); err != nil {
		return err
	}
	choice := registry.Choice{Package: f.pkg}
	if f.remote != "" {
		n, err := strconv.Atoi(f.remote)
		if err != nil || n < 1 {
			return usagef("add: --remote %q: want the remote's number (1 for the first; mcpbridge registry show lists them)", f.remote)
		}
		choice.Remote = n
	}
	resp, err := e.fetchServer(ctx, "add", f.fromRegistry)
	if err != nil {
		return err
	}
	built, err := registry.Build(resp.Server, choice)
	if err != nil {
		return usagef("add: %v%s", err, addInstead(f, resp.Server))
	}
	name, err := registryEntryName(f, resp.Server.Name)
	if err != nil {
		return err
	}
	if err := e.addEntry("add", f, name, built.Node(name)); err != nil {
		return err
	}
	if o := resp.Meta.Official; o != nil && o.Status != "" && o.Status != "active" {
		fmt.Fprintf(e.Stderr, "mcpbridge: add: the registry marks %s %s %s%s\n", termsafe.Line(resp.Server.Name), termsafe.Line(resp.Server.Version), termsafe.Line(o.Status), termsafe.Line(prefixed(": ", o.StatusMessage)))
	}
	// What the publisher's document makes run, shown before it first runs.
	if line := built.CommandLine(); line != "" {
		fmt.Fprintf(e.Stderr, "mcpbridge: add: it runs: %s\n", termsafe.Line(line))
	}
	for _, n := range built.Notes {
		fmt.Fprintf(e.Stderr, "mcpbridge: add: %s\n", termsafe.Line(n))
	}
	e.warnSentAway(built)
	return nil
}

// warnSentAway says which variables the remote entry built sends to its
// host that are set already: the publisher named them, and a value set
// for something else (an OPENAI_API_KEY) would go to that host unasked.
func (e *env) warnSentAway(built registry.Entry) {
	host := built.URL
	if u, err := url.Parse(built.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	for _, name := range built.SentAway() {
		if _, set := e.LookupEnv(name); set {
			fmt.Fprintf(e.Stderr, "mcpbridge: add: %s is set in your environment, and this entry sends its value to %s: if it is meant for something else, refer to another variable there\n",
				termsafe.Line(name), termsafe.Line(host))
		}
	}
}

// registryAddLine is the user's add --from-registry command, to paste:
// where it writes, the server as given (a file stays one), name, and
// choice (a --package or --remote flag; "" for none).
func registryAddLine(f *flags, name, choice string) string {
	line := addLine(f)(false) + " --from-registry " + shellQuote(f.fromRegistry)
	for _, w := range []string{name, choice} {
		if w != "" {
			line += " " + w
		}
	}
	return line
}

// addInstead follows add's refusal of the choice it was given (or of
// its own) of s: the user's command with each choice that adds, a line
// each, or where each says why none does.
func addInstead(f *flags, s registry.Server) string {
	name := ""
	if len(f.args) == 1 {
		name = shellQuote(f.args[0])
	}
	var b strings.Builder
	for _, c := range addable(s) {
		b.WriteString("\n  " + registryAddLine(f, name, c.flag))
	}
	switch {
	case b.Len() > 0:
		return "; what adds instead:" + b.String()
	case len(s.Packages)+len(s.Remotes) > 1: // of one, the error said why
		return "; none of its packages and remotes can be added (mcpbridge registry show " + shellQuote(f.fromRegistry) + " says why of each)"
	}
	return ""
}

// checkRegistryAdd refuses what goes with a command or URL of one's own.
func checkRegistryAdd(f *flags) error {
	switch {
	case f.fromRegistry == "" && (f.pkg != "" || f.remote != ""):
		return usagef("add: --package and --remote go with --from-registry NAME[@VERSION]")
	case f.pkg != "" && f.remote != "":
		return usagef("add: give --package or --remote, not both")
	case len(f.args) > 1, f.url != "", len(f.env) > 0, len(f.headers) > 0, f.transport != "":
		return usagef("add: --from-registry writes the server's command or URL, environment and headers itself: give only [NAME] (the entry's name) besides it, and edit the entry afterwards")
	}
	return nil
}

// registryEntryName is the entry's name: NAME when given, else the part
// of the registry name after its namespace, made a valid serverName
// (registry.ServerName).
func registryEntryName(f *flags, registryName string) (string, error) {
	if len(f.args) == 1 {
		return f.args[0], nil
	}
	name := registry.ServerName(registryName)
	if why := mcpclient.ValidServerName(name); why != "" {
		return "", usagef("add: no server name can be made of %q (%s): give one, as in: %s", registryName, why, registryAddLine(f, "NAME", userChoice(f)))
	}
	return name, nil
}

// userChoice is the --package or --remote flag f was given, "" for none.
func userChoice(f *flags) string {
	switch {
	case f.pkg != "":
		return "--package " + shellQuote(f.pkg)
	case f.remote != "":
		return "--remote " + shellQuote(f.remote)
	}
	return ""
}

// registryOutdated asks the registry for the latest version of each
// configured entry that records one.
func (e *env) registryOutdated(ctx context.Context, argv []string) error {
	f, err := parseFlags("registry outdated", flagSpec{source: true, json: true}, argv)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("registry outdated: unexpected argument %q", f.args[0])
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	c, err := e.registryClient()
	if err != nil {
		return err
	}
	var out []registry.Outdated
	var update []string
	for _, pe := range src.plan.Entries {
		if o, ok := registryRef(pe); ok {
			out = append(out, c.Check(ctx, o))
			update = append(update, updateAdvice(pe, o.Name))
		}
	}
	return e.writeOutdated(f, src.plan.Source, out, update)
}

// updateAdvice is how to take entry pe, made from the registry server
// name, to the latest version: removed and added again under its own
// name, in its own file, of the same kind of package (a remote's number
// is not recorded: registry show lists them).
func updateAdvice(pe host.PlanEntry, name string) string {
	file := ""
	if pe.Entry.File != "" {
		file = " --config " + shellQuote(pe.Entry.File)
	}
	choice := ""
	switch cmd := report.Node(pe, "command"); {
	case cmd != nil && packageOf[cmd.Value] != "":
		choice = " --package " + packageOf[cmd.Value]
	case report.Node(pe, "url") != nil:
		choice = " --remote N (mcpbridge registry show " + name + " lists them)"
	}
	id := shellQuote(pe.Entry.ID)
	return fmt.Sprintf("mcpbridge remove %s%s, then mcpbridge add --from-registry %s%s %s%s", id, file, name, file, id, choice)
}

// packageOf is the registry type of the packages each command runs
// (registry.Build's commands).
var packageOf = map[string]string{"npx": "npm", "uvx": "pypi", "docker": "oci", "dnx": "nuget"}

// registryRef is the registry name and version an entry records, as
// written (an entry invalid in this shell, for an unset ${VAR}, still
// has them).
func registryRef(pe host.PlanEntry) (registry.Outdated, bool) {
	n := report.Node(pe, "registry")
	if n == nil || n.Kind != yaml.MappingNode {
		return registry.Outdated{}, false
	}
	name, version := confedit.Value(n, "name"), confedit.Value(n, "version")
	if name == nil || version == nil {
		return registry.Outdated{}, false
	}
	return registry.Outdated{ID: pe.Entry.ID, Name: name.Value, Version: version.Value}, true
}

func (e *env) writeOutdated(f *flags, source string, out []registry.Outdated, update []string) error {
	failed := false
	for _, o := range out {
		failed = failed || o.Error != ""
	}
	if f.json {
		if out == nil {
			out = []registry.Outdated{} // [] for scripts, never null
		}
		if err := writeJSON(e.Stdout, out); err != nil {
			return err
		}
	} else {
		if len(out) == 0 {
			fmt.Fprintf(e.Stderr, "no entry of %s was added from the registry (mcpbridge add --from-registry NAME records one)\n", source)
		}
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		for i, o := range out {
			state := "up to date"
			switch {
			case o.Error != "":
				state = "unknown: " + o.Error
			case o.Outdated:
				state = fmt.Sprintf("%s is published: %s", o.Latest, update[i])
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.ID, termsafe.Line(o.Name), termsafe.Line(o.Version), termsafe.Line(state))
		}
		tw.Flush()
	}
	if failed {
		return &exitError{ExitFailed}
	}
	return nil
}
