package cli

import (
	_ "embed"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/cliententry"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
	viewkind "github.com/mcpbridge/mcpbridge/internal/kinds/view"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
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
	opts := mcpclient.Options{Environ: e.Environ, OneShot: oneShot, Elicit: true, OAuth: o, Tracer: e.tracer, Pins: e.pinBook(), ScanAll: e.scanAll}
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
	plans, err := e.configReader(cat).Plans(files, false)
	if err != nil {
		return nil, &configError{err}
	}
	if onlyPermissions(files, plans) {
		// The agent's "always" wrote the first user config of someone
		// trying the demo: the demo stays.
		def, err := cat.Parse("embedded default", defaultConfig, e.lookup)
		if err != nil {
			return nil, &configError{err} // untested: the embedded default is tested valid
		}
		plans = append([]*host.Plan{def}, plans...)
	}
	plan := host.Merge(plans...)
	return &source{name: plan.Source, files: files, plan: plan, defines: configsource.ServersByFile(plans)}, nil
}

// onlyPermissions reports whether the user config is the one file read
// (plans holds its plan) and its entries are all the agent's permissions:
// it names no server nor anything else to run.
func onlyPermissions(files []scopes.File, plans []*host.Plan) bool {
	if len(files) != 1 || files[0].Scope != scopes.User {
		return false
	}
	n := 0
	for _, p := range plans {
		for _, pe := range p.Entries {
			if pe.Entry.Name != permkind.Name {
				return false
			}
			n++
		}
	}
	return n > 0
}

// urlSource is --url: one Streamable HTTP server, named by --name.
func urlSource(f *flags) (*source, error) {
	headers, err := cliententry.ParseHeaders(f.headers)
	if err != nil {
		return nil, usagef("%v", err)
	}
	name := f.name
	if name == "" {
		name = "remote"
	}
	spec, err := clientkind.NewSpec(mcpclient.Config{
		ServerName: name,
		Transport:  mcpclient.TransportStreamableHTTP,
		URL:        f.url,
		Headers:    headers,
	})
	if err != nil {
		return nil, usagef("--url: %v", err)
	}
	return &source{name: "--url", plan: &host.Plan{Source: "--url", Entries: []host.PlanEntry{{
		Entry: host.Entry{ID: name, Name: clientkind.Name},
		Spec:  spec,
	}}}}, nil
}

// configError is a bad config file: exit status 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// only narrows src to the enabled entry whose server is server, when there
// is one: a call needs only its own server (and the entries that are not
// servers, such as sampling, which serve it). Otherwise src is returned
// unchanged.
func (src *source) only(server string) *source {
	var keep []host.PlanEntry
	found := false
	for _, pe := range src.plan.Enabled() {
		switch {
		case pe.Entry.Name != clientkind.Name:
			keep = append(keep, pe)
		case pe.Spec.Name == server && !found:
			keep, found = append(keep, pe), true
		}
	}
	if !found {
		return src
	}
	return src.withEntries(keep)
}

// withEntries is src with only the plan entries keep.
func (src *source) withEntries(keep []host.PlanEntry) *source {
	out := *src
	out.plan = &host.Plan{Source: src.plan.Source, Entries: keep}
	return &out
}
