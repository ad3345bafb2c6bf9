package host_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
)

// fuzzSecret is what every set variable expands to in FuzzParse: it must
// never appear in an error, whole or cut short.
const fuzzSecret = "Zq7kSECRETvalue9xW"

// FuzzParse decodes arbitrary bytes as a whole composition file with the
// mcp-client kind, as `mcpbridge validate` does: it must not panic, it
// returns a plan or confpos.Errors, never both or neither, every problem is
// positioned (a yaml.v3 syntax error may have no column) and names the
// file, and no expanded ${VAR} value shows in any message.
func FuzzParse(f *testing.F) {
	examples, _ := filepath.Glob("../examples/*.yaml")
	for _, name := range examples {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"[]",
		"# only a comment\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: stdio, command: ${CMD}, args: [\"${A:-x}\", \"$$\"], env: {K: \"${K}\"}}\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: streamable-http, url: \"http://${HOST}/mcp\", headers: {Authorization: \"Bearer ${TOKEN}\"}}\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: streamable-http, url: \"${U}\"}\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: stdio, command: x, cwd: \"${unsetX}\"}\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: \"${N}\", transport: stdio, command: x}\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: stdio, command: x, startupTimeoutMs: \"${T}\"}\n",
		"- id: a\n  name: mcp-client\n  config: &c {serverName: a, transport: stdio, command: x}\n- id: b\n  name: mcp-client\n  config: *c\n",
		"- id: a\n  name: nope\n- id: a\n  name: mcp-client\n  disabled: yes\n",
		"- id: a\n  name: mcp-client\n---\n- id: b\n",
		"- id: [a\n",
		"- {id: a, name: mcp-client, config: [1]}\n",
		"key: value\n",
		"- *missing\n",
		"- id: \"\\xff\"\n\x01",
		"- id: a\n\tname: b\n",
		"- id: a\n  name: mcp-client\n  config: {serverName: a, transport: stdio, command: \"${A:-${B:-${C}}\", args: [\"${\"]}\n",
	} {
		f.Add([]byte(s))
	}
	lookup := func(name string) (string, bool) {
		if strings.HasPrefix(name, "unset") || len(name)%4 == 3 {
			return "", false
		}
		return fuzzSecret, true
	}
	cat := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.yaml"
		plan, err := cat.Parse(file, data, lookup)
		entries, perr := host.ParseEntries(file, data)
		if perr == nil && plan != nil && len(entries) != len(plan.Entries) {
			t.Fatalf("ParseEntries found %d entries where Parse planned %d", len(entries), len(plan.Entries))
		}
		if perr != nil && err == nil {
			t.Fatalf("ParseEntries failed but Parse did not: %v", perr)
		}
		for _, e := range []error{err, perr} {
			checkConfigErrors(t, file, data, e)
		}
		if (plan == nil) == (err == nil) {
			t.Fatalf("plan %v and error %v: want exactly one", plan, err)
		}
		if plan != nil {
			if plan.Source != file {
				t.Errorf("plan source %q", plan.Source)
			}
			seen := map[string]bool{}
			for _, pe := range plan.Entries {
				if seen[pe.Entry.ID] {
					t.Errorf("duplicate id %q in a plan", pe.Entry.ID)
				}
				seen[pe.Entry.ID] = true
				if pe.Entry.Line <= 0 || pe.Entry.Column <= 0 {
					t.Errorf("entry %q at %d:%d", pe.Entry.ID, pe.Entry.Line, pe.Entry.Column)
				}
			}
		}
	})
}

// checkConfigErrors asserts that err is nil or ConfigErrors of positioned
// problems in file that show no expanded value.
func checkConfigErrors(t *testing.T, file string, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ces confpos.Errors
	if !errors.As(err, &ces) || len(ces) == 0 {
		t.Fatalf("error is not confpos.Errors: %T %v", err, err)
	}
	input := string(data)
	for _, ce := range ces {
		msg := ce.Error()
		if ce.File != file || !strings.HasPrefix(msg, file+":") {
			t.Errorf("problem without the file name: %q", msg)
		}
		if ce.Line <= 0 {
			t.Errorf("problem without a line: %q", msg)
		}
		if ce.Column <= 0 && !strings.HasPrefix(ce.Msg, "invalid YAML: ") {
			t.Errorf("problem without a column: %q", msg)
		}
		// The secret, or a telling piece of it, where the input does
		// not hold it itself.
		for _, piece := range []string{fuzzSecret, fuzzSecret[:8], fuzzSecret[len(fuzzSecret)-8:]} {
			if strings.Contains(msg, piece) && !strings.Contains(input, piece) {
				t.Errorf("problem shows an expanded value (%q): %q", piece, msg)
			}
		}
	}
}
