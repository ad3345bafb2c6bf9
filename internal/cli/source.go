package cli

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/cliententry"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
	viewkind "github.com/mcpbridge/mcpbridge/internal/kinds/view"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// defaultConfig runs the demo server inside this binary, so mcpbridge does
// its job out of the box (docs/decisions.md §3).
//
//go:embed default.yaml
var defaultConfig []byte

// source is where the servers come from.
type source struct {
	name  string        // file names, "--url", or "embedded default", for messages
	files []scopes.File // the files, to watch for changes; none when not a file
	plan  *host.Plan
	// defines names, by config file, the servers its entries define, those
	// a later file replaces included: the pins its lock keeps (pin.go).
	defines map[string][]string
	// filePlans are the plans of files, one each, as last read.
	filePlans []*host.Plan
}

// catalog is the set of plugin kinds this command runs, built per run (no
// globals). One-shot commands (tools, call, status) never reconnect; a
// long-running command passes oneShot false.
func (e *env) catalog(oneShot bool) *host.Catalog {
	return e.catalogOAuth(oneShot, mcpclient.OAuthOptions{})
}

// catalogOAuth is catalog with the OAuth settings of the command (see
// oauthOptions).
func (e *env) catalogOAuth(oneShot bool, o mcpclient.OAuthOptions) *host.Catalog {
	return host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{
		Server: e.serverOptions(oneShot, o),
	}), e.samplingKind(), e.modelKind(), viewkind.NewKind(), e.gatewayKind(), permkind.Kind{})
}

// serverOptions are the options of every server a command starts. A
// gateway (serve) forwards elicitation and sampling to the client that
// made the call; a one-shot command answers elicitation itself (--elicit).
func (e *env) serverOptions(oneShot bool, o mcpclient.OAuthOptions) mcpclient.Options {
	opts := mcpclient.Options{Environ: e.Environ, Withheld: e.withheld, OneShot: oneShot, Elicit: true, OAuth: o, Tracer: e.tracer, Pins: e.pinBook(), ScanAll: e.scanAll}
	if oneShot {
		opts.Ask = e.answer
		opts.Sample = e.sampling
	} else {
		opts.Sample = true
	}
	return opts
}

// loadSource resolves SOURCE: --url, --config, MCPBRIDGE_CONFIG, the user
// and project files (scopes.go), or the embedded default, in that order,
// and validates it with cat's kinds. Nothing is started. An entry whose
// config is invalid stays in the plan, to fail alone.
func (e *env) loadSource(f *flags, cat *host.Catalog) (*source, error) {
	if f.url != "" {
		return urlSource(f)
	}
	files := e.configFiles(f)
	if len(files) == 0 {
		if !e.quiet {
			e.defaultNotice(f)
		}
		plan, err := cat.Parse("embedded default", defaultConfig, e.lookup)
		if err != nil {
			return nil, &configError{err} // untested: the embedded default is tested valid
		}
		return &source{name: "embedded default", plan: plan}, nil
	}
	src, err := e.readFiles(cat, files, nil)
	if err != nil {
		return nil, &configError{err}
	}
	return src, nil
}

// readFiles reads files into the source they make, at the start (last
// nil) and at each reload of serve (last: the previous read's, whose plan
// a file gone since keeps: configsource.Reader.Plans), so that a reload
// runs what a start would.
func (e *env) readFiles(cat *host.Catalog, files []scopes.File, last *source) (*source, error) {
	var lastPlans []*host.Plan
	if last != nil {
		lastPlans = last.filePlans
	}
	filePlans, err := e.configReader(cat).Plans(files, lastPlans)
	if err != nil {
		return nil, err
	}
	plans := filePlans
	if configsource.OnlyPermissions(files, filePlans) {
		// The agent's "always" wrote the first user config of someone
		// trying the demo: the demo stays.
		def, err := cat.Parse("embedded default", defaultConfig, e.lookup)
		if err != nil {
			return nil, err // untested: the embedded default is tested valid
		}
		plans = append([]*host.Plan{def}, filePlans...)
	}
	plan := host.Merge(plans...)
	names := plan.CredentialVars()
	e.credentials.Store(&names)
	return &source{name: plan.Source, files: files, plan: plan, defines: configsource.ServersByFile(plans), filePlans: filePlans}, nil
}

// urlSource is --url: one Streamable HTTP server, named by --name.
func urlSource(f *flags) (*source, error) {
	headers, err := cliententry.ParseHeaders(f.headers)
	if err != nil {
		return nil, usagef("%v", err)
	}
	plan, err := configsource.URL(f.name, f.url, headers)
	if err != nil {
		return nil, usagef("--url: %v", err)
	}
	return &source{name: "--url", plan: plan}, nil
}

// noServers says, when the config files in use hold no servers (the
// last one removed), so and how to go on: add one, or, when the files
// were found rather than named and hold nothing at all, remove them to
// run the embedded demo again (it runs only without a config file); ""
// when there is a server, or no file.
func (src *source) noServers() string {
	if len(src.files) == 0 {
		return ""
	}
	for _, pe := range src.plan.Entries {
		if pe.Entry.Name == clientkind.Name {
			return ""
		}
	}
	files, verb := termsafe.Line(strings.Join(configsource.Paths(src.files), " and ")), "holds"
	if len(src.files) > 1 {
		verb = "hold"
	}
	msg := fmt.Sprintf("%s %s no servers: %s", files, verb, addHint(src.files))
	if src.allEmptyScopes() {
		msg += fmt.Sprintf(", or remove %s, now empty, to run the embedded demo again", files)
	}
	return msg
}

// addHint says how to add a server to files: add writes a scope's file
// or $MCPBRIDGE_CONFIG's, and a file named by --config when given it
// again; another client's config, which add does not edit, takes one its
// own way.
func addHint(files []scopes.File) string {
	if len(files) != 1 || files[0].Scope != "" || files[0].Env != "" {
		return "add one with mcpbridge add NAME -- COMMAND [ARGS...] (or mcpbridge add NAME URL)"
	}
	path := termsafe.Line(files[0].Path)
	data, _ := host.ReadConfigFile(files[0].Path) // read already: it was there
	switch importconf.Detect(data) {
	case importconf.FormatMCPServers:
		return `add one under its "mcpServers"`
	case importconf.FormatCodex:
		return "add one as an [mcp_servers.NAME] table"
	}
	return fmt.Sprintf("add one with mcpbridge add --config %s NAME -- COMMAND [ARGS...] (or mcpbridge add --config %s NAME URL)", path, path)
}

// allEmptyScopes reports whether every file of src was found in a scope
// (not named by --config or $MCPBRIDGE_CONFIG) and holds no entry.
func (src *source) allEmptyScopes() bool {
	for i, f := range src.files {
		if f.Scope == "" || i >= len(src.filePlans) || len(src.filePlans[i].Entries) > 0 {
			return false
		}
	}
	return true
}

// configError is a bad config file: exit status 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// only narrows src to the enabled entry whose server is server, when there
// is one (configsource.Only); otherwise src is returned unchanged.
func (src *source) only(server string) *source {
	plan, ok := configsource.Only(src.plan, server)
	if !ok {
		return src
	}
	out := *src
	out.plan = plan
	return &out
}
