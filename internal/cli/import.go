package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	"github.com/mcpbridge/mcpbridge/internal/registry"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// importConfig prints another client's MCP config as mcpbridge YAML, and
// each field it could not map on stderr (they are comments in the YAML
// too). The YAML is checked as validate checks a file: when it would not
// load, it is still printed (every server, to fix in one pass), each
// problem is told at its place in the source file, and the exit status
// is 2.
func (e *env) importConfig(argv []string) error {
	f, err := parseFlags("import", flagSpec{}, argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("import: want FILE, got %d arguments", len(f.args))
	}
	path := f.args[0]
	data, err := host.ReadConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &configError{fmt.Errorf("%s does not exist", path)}
	}
	if err != nil {
		return &configError{err}
	}
	if registry.LooksLikeServerJSON(data) {
		return e.importServerJSON(path, data)
	}
	res, plan, err := e.configReader(e.catalog(true)).Import(path, data)
	if errors.Is(err, importconf.ErrNotForeign) {
		return &configError{fmt.Errorf("%s is not an mcpServers JSON or a Codex config.toml (an mcpbridge YAML config needs no import)", path)}
	}
	if err != nil {
		return &configError{err}
	}
	e.Stdout.Write(res.YAML)
	if err := planErrors(plan); err != nil {
		return &configError{fmt.Errorf("%w\nthe config printed would not load: correct %s and import it again, or edit what was printed", err, path)}
	}
	return nil
}

// importServerJSON prints the entry add --from-registry FILE would write
// for a server.json (its first package mcpbridge can start, else its
// first remote), and on stderr what to set; no network.
func (e *env) importServerJSON(path string, data []byte) error {
	s, err := registry.ParseServer(data, path)
	if err != nil {
		return &configError{err}
	}
	built, err := registry.Build(s, registry.Choice{})
	if err != nil {
		return &configError{fmt.Errorf("%s: %w (mcpbridge registry show %s lists what it offers)", path, err, path)}
	}
	name, err := registryEntryName(&flags{}, s.Name)
	if err != nil {
		return err
	}
	out, err := confedit.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{built.Node(name)}})
	if err != nil {
		return err // untested: the entry was built above
	}
	e.Stdout.Write(out)
	for _, n := range built.Notes {
		fmt.Fprintf(e.Stderr, "mcpbridge: %s: %s\n", path, termsafe.Line(n))
	}
	return nil
}
