package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
)

// yamlFence is a ```yaml block of Markdown, its fence indented as a list
// item's may be.
var yamlFence = regexp.MustCompile("(?ms)^([ \t]*)```ya?ml[^\n]*\n(.*?)^[ \t]*```")

// fragmentBase is what an entry of each kind needs beyond a fragment of
// its config (an oauth block alone) to load.
var fragmentBase = map[string]map[string]string{
	"mcp-client":  {"serverName": "example", "transport": "streamable-http", "url": "https://example.com/mcp"},
	"gateway":     nil,
	"model":       nil,
	"sampling":    nil,
	"tool-search": nil,
	"permissions": nil,
}

// Every YAML example of the docs and the README that is a config (a list
// of entries) loads as it is, and one that is a fragment of an entry's
// config (store: …, oauth: …) loads as the config of the kind whose keys
// it has. Variables are set (to "example"); whether a file it names
// exists (a sandbox path, a CA file) is the machine's matter, not the
// example's. A block that is neither
// (another program's config) is left alone.
func TestDocYAMLExamplesLoad(t *testing.T) {
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	e := &env{IO: IO{LookupEnv: func(string) (string, bool) { return "example", true }}}
	r := e.configReader(e.catalog(true))
	r.Notes = nil
	n := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range yamlFence.FindAllSubmatchIndex(data, -1) {
			line := strings.Count(string(data[:m[0]]), "\n") + 1
			where := fmt.Sprintf("%s:%d", strings.TrimPrefix(doc, "../../"), line)
			block := dedent(string(data[m[4]:m[5]]))
			if problems, checked := loadExample(r, where, block); checked {
				n++
				if problems != "" {
					t.Errorf("%s: the example does not load:\n%s\n%s", where, problems, block)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("%d examples checked: the docs have more", n)
	}
}

// loadExample loads block, the YAML example at where: as a config when it
// is a list of entries, else as a fragment of the config of each kind of
// fragmentBase. checked is false for a block that is neither.
func loadExample(r configsource.Reader, where, block string) (problems string, checked bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil || len(doc.Content) == 0 {
		return fmt.Sprint(err), true
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.SequenceNode:
		return loadErrors(r, where, []byte(block)), true
	case root.Kind != yaml.MappingNode:
		return "", false
	}
	var tried []string
	for kind, base := range fragmentBase {
		entry := fragmentEntry(kind, base, root)
		out, _ := yaml.Marshal([]any{entry})
		errs := loadErrors(r, where, out)
		if errs == "" {
			return "", true
		}
		if !strings.Contains(errs, "unknown key") {
			tried = append(tried, kind+":\n"+errs)
		}
	}
	slices.Sort(tried)
	return strings.Join(tried, "\n"), len(tried) > 0
}

// fragmentEntry is an entry of kind whose config is fragment over base.
func fragmentEntry(kind string, base map[string]string, fragment *yaml.Node) map[string]any {
	var cfg map[string]any
	_ = fragment.Decode(&cfg)
	for k, v := range base {
		if _, ok := cfg[k]; !ok {
			cfg[k] = v
		}
	}
	return map[string]any{"id": "example", "name": kind, "config": cfg}
}

// loadErrors are the problems that keep data from loading, "" when none.
func loadErrors(r configsource.Reader, where string, data []byte) string {
	plan, err := r.Parse(where, data)
	if err == nil {
		err = configsource.InvalidErrors(plan)
	}
	if err == nil {
		return ""
	}
	es := confpos.AsErrors(err)
	if es == nil {
		return err.Error()
	}
	var out []string
	for _, e := range es {
		if !strings.Contains(e.Msg, "no such file or directory") { // the machine's matter, as sandbox paths are
			out = append(out, e.Error())
		}
	}
	return strings.Join(out, "\n")
}

// dedent removes the indentation every non-blank line of s shares.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}
