package registry

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Choice says which of a server.json's ways to run the server an entry
// uses. The zero Choice takes the first package mcpbridge can start (over
// stdio), else the first remote.
type Choice struct {
	// Package is a registry type (npm, pypi, oci, nuget, mcpb): the first
	// package of that type.
	Package string
	// Remote is a remote by its number, from 1; 0 for none.
	Remote int
}

// Entry is an mcp-client config made from a server.json, as it is
// written in a config file: what the user must give is a ${VAR}
// reference, never a value, and literal text from the document has its
// "$" escaped, so that it never expands a variable of the user's.
type Entry struct {
	Transport string // stdio, streamable-http or sse
	Command   string
	Args      []string
	Env       []Pair
	URL       string
	Headers   []Pair
	// Name and Version are the server's in the registry, recorded in the
	// entry so that outdated can compare.
	Name, Version string
	// Notes say what to set before the server starts, and what else the
	// document asks of the user.
	Notes []string
}

// Pair is one environment variable or header.
type Pair struct{ Key, Value string }

// CommandLine is what a package entry runs, as a person reads it: the
// values its document fixes in its environment (NAME=value: the launcher
// reads them too, an NPM_CONFIG_REGISTRY or a NODE_OPTIONS), then the
// command and its arguments; "" for a remote. A variable the user sets
// (a whole ${VAR} reference) is in the notes instead.
func (e Entry) CommandLine() string {
	if e.Command == "" {
		return ""
	}
	var words []string
	for _, kv := range e.Env {
		if !wholeReference.MatchString(kv.Value) {
			words = append(words, kv.Key+"="+kv.Value)
		}
	}
	return strings.Join(append(append(words, e.Command), e.Args...), " ")
}

// defaultCommands is the command that runs each registry type's packages.
var defaultCommands = map[string]string{TypeNPM: "npx", TypePyPI: "uvx", TypeOCI: "docker", TypeNuGet: "dnx"}

// Build makes the entry for s, running what c chooses.
func Build(s Server, c Choice) (Entry, error) {
	var e Entry
	var err error
	switch {
	case c.Package != "" && c.Remote > 0:
		return Entry{}, fmt.Errorf("choose a package or a remote, not both")
	case c.Remote > 0:
		if c.Remote > len(s.Remotes) {
			return Entry{}, fmt.Errorf("%s has %s", s.Name, count(len(s.Remotes), "remote"))
		}
		e = buildRemote(s.Remotes[c.Remote-1])
	case c.Package != "":
		i := slices.IndexFunc(s.Packages, func(p Package) bool { return p.RegistryType == c.Package })
		if i < 0 {
			return Entry{}, fmt.Errorf("%s has no %s package", s.Name, c.Package)
		}
		e, err = buildPackage(s, s.Packages[i])
	default:
		e, err = buildDefault(s)
	}
	if err != nil {
		return Entry{}, err
	}
	e.Name, e.Version = s.Name, s.Version
	return e, nil
}

// buildDefault runs the first package that mcpbridge can start, else the
// first remote; else it says why the first package cannot be started.
func buildDefault(s Server) (Entry, error) {
	for _, p := range s.Packages {
		if _, ok := defaultCommands[p.RegistryType]; ok && p.Transport.Type == TransportStdio {
			return buildPackage(s, p)
		}
	}
	if len(s.Remotes) > 0 {
		return buildRemote(s.Remotes[0]), nil
	}
	if len(s.Packages) > 0 {
		return buildPackage(s, s.Packages[0])
	}
	where := ""
	if s.WebsiteURL != "" {
		where = ": its website says how to install it: " + s.WebsiteURL
	}
	return Entry{}, fmt.Errorf("%s lists neither packages nor remotes%s", s.Name, where)
}

func count(n int, what string) string {
	switch n {
	case 0:
		return "no " + what + "s"
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// buildPackage makes the command line that runs p.
func buildPackage(s Server, p Package) (Entry, error) {
	what := fmt.Sprintf("the %s package %s of %s", p.RegistryType, p.Identifier, s.Name)
	if p.Transport.Type != TransportStdio {
		return Entry{}, fmt.Errorf("%s serves %s at %s once started: mcpbridge connects to such a server but does not start it; start it yourself and add its URL (mcpbridge add NAME URL), or choose another package or a remote", what, p.Transport.Type, p.Transport.URL)
	}
	command, ok := defaultCommands[p.RegistryType]
	switch {
	case p.RegistryType == TypeMCPB:
		return Entry{}, fmt.Errorf("%s is an MCP bundle (.mcpb), which an app such as Claude Desktop installs; mcpbridge does not unpack bundles: download %s, check its SHA-256 (%s), unpack it and add the command its manifest.json names (mcpbridge add NAME -- COMMAND), or choose another package or a remote", what, p.Identifier, p.FileSHA256)
	case !ok:
		return Entry{}, fmt.Errorf("%s: mcpbridge does not know how to run %q packages (it runs npm, pypi, oci and nuget); choose another package or a remote", what, p.RegistryType)
	}
	for _, a := range p.RuntimeArguments {
		if a.Type != "named" {
			// Before the package, a positional argument is what npx, uvx,
			// dnx or docker run takes for the package: it would run instead.
			return Entry{}, fmt.Errorf("%s has a positional runtime argument (%q), which %s would take for the package to run instead of %s; choose another package or a remote", what, cmp.Or(a.Value, a.ValueHint), command, p.Identifier)
		}
	}
	r := &resolver{}
	runtimeArgs, envVars := p.RuntimeArguments, p.EnvironmentVariables
	if p.RegistryType == TypeOCI {
		var moved []KeyValue
		runtimeArgs, moved = secretEnvArgs(runtimeArgs)
		envVars = append(slices.Clone(envVars), moved...)
	}
	e := Entry{Transport: TransportStdio, Command: command, Env: r.env(envVars)}
	runtime, args := r.args(runtimeArgs), r.args(p.PackageArguments)
	switch p.RegistryType {
	case TypeNPM:
		e.Args = slices.Concat([]string{"-y"}, runtime, []string{literal(versioned(p, "@"))}, args)
	case TypePyPI:
		e.Args = slices.Concat(runtime, []string{literal(versioned(p, "=="))}, args)
	case TypeOCI:
		e.Args = slices.Concat([]string{"run", "-i", "--rm"}, runtime, dockerEnv(e.Env, r.passed), []string{literal(image(p))}, args)
	case TypeNuGet:
		e.Args = slices.Concat(runtime, []string{literal(versioned(p, "@")), "--yes"})
		if len(args) > 0 {
			e.Args = slices.Concat(e.Args, []string{"--"}, args)
		}
	}
	if p.RuntimeHint != "" && p.RuntimeHint != command {
		r.note("the publisher suggests running it with %s; the entry runs %s", p.RuntimeHint, command)
	}
	e.Notes = r.notes
	return e, nil
}

// versioned is the package with its version: name@1.2.3, name==1.2.3.
func versioned(p Package, sep string) string {
	if p.Version == "" {
		return p.Identifier
	}
	return p.Identifier + sep + p.Version
}

// image is an OCI package's image reference, tagged with its version
// when the identifier carries no tag or digest of its own.
func image(p Package) string {
	last := p.Identifier[strings.LastIndex(p.Identifier, "/")+1:]
	if p.Version == "" || strings.ContainsAny(last, ":@") {
		return p.Identifier
	}
	return p.Identifier + ":" + p.Version
}

// secretEnvArgs takes a container's "-e NAME=VALUE" runtime arguments
// whose value holds a secret out of args, as environment variables of
// the entry: docker run -e NAME then passes the value from docker's own
// environment, where -e NAME=VALUE would put the secret on docker's
// command line, which every user of the machine can read (ps).
func secretEnvArgs(args []Argument) (rest []Argument, env []KeyValue) {
	for _, a := range args {
		name, value, ok := strings.Cut(a.Value, "=")
		if a.Type == "named" && (a.Name == "-e" || a.Name == "--env") && ok && yamlconf.IsVarName(name) && holdsSecret(a.Input) {
			in := a.Input
			in.Value = value
			env = append(env, KeyValue{Input: in, Name: name})
			continue
		}
		rest = append(rest, a)
	}
	return rest, env
}

// holdsSecret reports whether in is a secret or fills one of its
// {variables} with one.
func holdsSecret(in Input) bool {
	if in.IsSecret {
		return true
	}
	for _, v := range in.Variables {
		if v.IsSecret {
			return true
		}
	}
	return false
}

// dockerEnv passes each variable of the entry's env, and each optional
// one left to the user's environment, on into the container (docker run
// -e NAME takes its value from docker's own environment, and passes
// nothing when it has none).
func dockerEnv(env []Pair, passed []string) []string {
	var out []string
	for _, kv := range env {
		out = append(out, "-e", kv.Key)
	}
	for _, name := range passed {
		out = append(out, "-e", name)
	}
	return out
}

// buildRemote makes the entry that connects to r.
func buildRemote(t Transport) Entry {
	r := &resolver{}
	e := Entry{Transport: t.Type, URL: r.template(t.URL, t.Variables)}
	for _, h := range t.Headers {
		if v, ok := r.value(h.Input, h.Name, yamlconf.VarName(h.Name)); ok {
			e.Headers = append(e.Headers, Pair{h.Name, v})
		}
	}
	e.Notes = r.notes
	return e
}

// resolver turns the document's inputs into config text, collecting the
// notes of what the user must set.
type resolver struct {
	notes []string
	// passed are the optional variables left to the user's environment
	// that reach the server when set (a container's need docker's -e).
	passed []string
}

func (r *resolver) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(r.notes, msg) {
		r.notes = append(r.notes, msg)
	}
}

// env is the entry's environment: fixed values, and a reference for each
// required variable. An optional one is left to the user's environment
// (mcpbridge passes it on unless its name looks like a secret's), and a
// container's gets docker's -e for it (but a host's own, PATH or HOME). A
// name the config cannot refer to ("api-key") is referred to by yamlconf.VarName's
// (API_KEY); a name the document repeats is taken once, as first given.
func (r *resolver) env(vars []KeyValue) []Pair {
	var out []Pair
	seen := map[string]bool{}
	for _, kv := range vars {
		if seen[kv.Name] {
			continue
		}
		seen[kv.Name] = true
		ref := kv.Name
		if !yamlconf.IsVarName(ref) {
			ref = yamlconf.VarName(ref)
		}
		if kv.Input.Value == "" && !kv.Input.IsRequired && childproc.Scrubbed(kv.Name) {
			// Left to the user's environment, it would never arrive: a
			// variable whose name looks like a secret's is not passed on.
			r.note("optional: %s%s; mcpbridge passes on no variable named like a secret unless the entry sets it: to pass yours, add %s: ${%s} to env",
				kv.Name, describe(kv.Input), kv.Name, ref)
			r.pass(kv.Name)
			continue
		}
		if v, ok := r.value(kv.Input, kv.Name, ref); ok {
			out = append(out, Pair{kv.Name, v})
		} else {
			r.pass(kv.Name)
		}
	}
	return out
}

// pass records an optional variable for a container's -e, unless it is
// one of the host's own (PATH, HOME: the host's value would break the
// image).
func (r *resolver) pass(name string) {
	if !yamlconf.ShellVar(name) {
		r.passed = append(r.passed, name)
	}
}

// args are the command-line arguments of list, in order: a named one as
// its flag and its value, a positional one as its value; one the user
// need not give is left out.
func (r *resolver) args(list []Argument) []string {
	var out []string
	for _, a := range list {
		label, name := a.ValueHint, a.ValueHint
		if a.Type == "named" {
			label, name = a.Name, strings.TrimLeft(a.Name, "-")
		}
		v, ok := r.value(a.Input, label, yamlconf.VarName(cmp.Or(name, "arg")))
		if !ok {
			continue
		}
		if holdsSecret(a.Input) {
			r.note("%s is a secret on the server's command line, where every user of this machine can read it (ps); the publisher's package takes it there", label)
		}
		if a.Type != "named" {
			out = append(out, v)
			continue
		}
		switch {
		case a.Format == "boolean" && v == "false":
		case a.Format == "boolean" && v == "true", v == "":
			out = append(out, literal(a.Name)) // a flag alone
		default:
			out = append(out, literal(a.Name), v)
		}
	}
	return out
}

// value is the config text of an input called label: its fixed value
// (its {variables} filled), else a ${VAR} reference (with its default
// when it has one that is not secret) for a required input. An optional
// input without a fixed value is left out (ok false): the server has its
// own default.
func (r *resolver) value(in Input, label, variable string) (string, bool) {
	if in.Value != "" {
		return r.template(in.Value, in.Variables), true
	}
	if !in.IsRequired {
		if in.Description != "" || in.Default != "" {
			r.note("optional: %s%s", label, describe(in))
		}
		return "", false
	}
	return r.reference(in, label, variable), true
}

// reference is ${VAR} for a required input, or ${VAR:-default} when it
// has a default that can be written so; the note says what to set.
func (r *resolver) reference(in Input, label, variable string) string {
	if in.Default != "" && !in.IsSecret && !strings.ContainsAny(in.Default, "{}") {
		if label != variable {
			r.note("%s is ${%s}, %s unless you set it%s", label, variable, in.Default, describe(Input{Description: in.Description, Choices: in.Choices}))
		}
		return "${" + variable + ":-" + literal(in.Default) + "}"
	}
	if label == variable {
		r.note("set %s%s", variable, describe(in))
	} else {
		r.note("set %s (%s)%s", variable, label, describe(in))
	}
	return "${" + variable + "}"
}

// template fills the {variables} of s: a fixed value or default of the
// variable, else a ${VAR} reference. Text around them is literal. A
// {name} without a variable stays as written, as the schema says.
func (r *resolver) template(s string, vars map[string]Input) string {
	var b strings.Builder
	last := 0
	for _, m := range placeholder.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(literal(s[last:m[0]]))
		last = m[1]
		name := s[m[2]:m[3]]
		in, ok := vars[name]
		switch {
		case !ok:
			b.WriteString(literal(s[m[0]:m[1]]))
		case in.Value != "":
			b.WriteString(r.template(in.Value, nil))
		case in.Default != "" && !in.IsRequired:
			b.WriteString(literal(in.Default))
		default:
			in.IsRequired = true
			b.WriteString(r.reference(in, "{"+name+"}", yamlconf.VarName(name)))
		}
	}
	b.WriteString(literal(s[last:]))
	return b.String()
}

// wholeReference is a value that is one ${VAR} reference, with or
// without a default.
var wholeReference = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$`)

// placeholder is a {name} in a value or URL template.
var placeholder = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

// describe is the note's tail: the input's description and what kind of
// value it is.
func describe(in Input) string {
	var parts []string
	if in.Description != "" {
		parts = append(parts, in.Description)
	}
	if in.IsSecret {
		parts = append(parts, "a secret")
	}
	if len(in.Choices) > 0 {
		parts = append(parts, "one of "+strings.Join(in.Choices, ", "))
	}
	if in.Default != "" && !in.IsSecret {
		parts = append(parts, "default "+in.Default)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// literal is document text as config text: "$" doubled, so that a value
// the publisher wrote never expands a variable of the user's.
func literal(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// SentAway returns the environment variables whose values a remote entry
// sends to its server's host (those its URL and headers refer to), each
// once, in order; none for a package, which runs here.
func (e Entry) SentAway() []string {
	if e.URL == "" {
		return nil
	}
	var names []string
	note := func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", true // set, so no default is taken and every reference is seen
	}
	yamlconf.Expand(e.URL, note) // the document's text came through literal: it parses
	for _, h := range e.Headers {
		yamlconf.Expand(h.Value, note)
	}
	return names
}
