package cli

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/toolview/viewkind"
)

// defaultConfig runs the demo server inside this binary, so mcpbridge does
// its job out of the box (docs/decisions.md §3).
//
//go:embed default.yaml
var defaultConfig []byte

// defaultConfigPath is read when neither --config nor MCPBRIDGE_CONFIG is
// given.
const defaultConfigPath = "mcpbridge.yaml"

// source is where the servers come from.
type source struct {
	name string // file name, "--url", or "embedded default", for messages
	path string // the file, to watch for changes; "" when not a file
	plan *host.Plan
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
	return host.NewCatalog(mcpclient.NewKind(mcpclient.KindOptions{
		Server: e.serverOptions(oneShot, o),
	}), e.samplingKind(), viewkind.NewKind(), e.gatewayKind())
}

// serverOptions are the options of every server a command starts. A
// gateway (serve) forwards elicitation and sampling to the client that
// made the call; a one-shot command answers elicitation itself (--elicit).
func (e *env) serverOptions(oneShot bool, o mcpclient.OAuthOptions) mcpclient.Options {
	opts := mcpclient.Options{Environ: e.Environ, OneShot: oneShot, Elicit: true, OAuth: o, Tracer: e.tracer, Pins: e.pinBook()}
	if oneShot {
		opts.Ask = e.answer
		opts.Sample = e.sampling
	} else {
		opts.Sample = true
	}
	return opts
}

// loadSource resolves SOURCE: --url, --config, MCPBRIDGE_CONFIG,
// ./mcpbridge.yaml, or the embedded default, in that order, and validates
// it with cat's kinds. Nothing is started.
func (e *env) loadSource(f *flags, cat *host.Catalog) (*source, error) {
	if f.url != "" {
		return urlSource(f)
	}
	path := e.configPath(f)
	if path == "" {
		plan, err := cat.Parse("embedded default", defaultConfig, e.lookup)
		if err != nil {
			return nil, &configError{err} // untested: the embedded default is tested valid
		}
		return &source{name: "embedded default", plan: plan}, nil
	}
	return e.fileSource(path, cat)
}

// urlSource is --url: one Streamable HTTP server, named by --name.
func urlSource(f *flags) (*source, error) {
	headers, err := parseHeaders(f.headers)
	if err != nil {
		return nil, err
	}
	name := f.name
	if name == "" {
		name = "remote"
	}
	spec, err := mcpclient.NewSpec(mcpclient.Config{
		ServerName: name,
		Transport:  mcpclient.TransportStreamableHTTP,
		URL:        f.url,
		Headers:    headers,
	})
	if err != nil {
		return nil, usagef("--url: %v", err)
	}
	return &source{name: "--url", plan: &host.Plan{Source: "--url", Entries: []host.PlanEntry{{
		Entry: host.Entry{ID: name, Name: mcpclient.PluginName},
		Spec:  spec,
	}}}}, nil
}

// configPath is the config file to read: --config, MCPBRIDGE_CONFIG, or
// ./mcpbridge.yaml when it exists; "" for the embedded default.
func (e *env) configPath(f *flags) string {
	if f.config != "" {
		return f.config
	}
	if path := e.getenv("MCPBRIDGE_CONFIG"); path != "" {
		return path
	}
	if _, err := os.Stat(defaultConfigPath); err == nil {
		return defaultConfigPath
	}
	return ""
}

// fileSource reads and validates the config file at path.
func (e *env) fileSource(path string, cat *host.Catalog) (*source, error) {
	data, err := host.ReadConfigFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &configError{fmt.Errorf("config file %s does not exist", path)}
		}
		return nil, &configError{err}
	}
	plan, err := e.parseConfig(path, data, cat)
	if err != nil {
		return nil, &configError{err}
	}
	return &source{name: path, path: path, plan: plan}, nil
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
		case pe.Entry.Name != mcpclient.PluginName:
			keep = append(keep, pe)
		case pe.Spec.Name == server && !found:
			keep, found = append(keep, pe), true
		}
	}
	if !found {
		return src
	}
	plan := &host.Plan{Source: src.plan.Source, Entries: keep}
	return &source{name: src.name, path: src.path, plan: plan}
}
