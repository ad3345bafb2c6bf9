package mcptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ThirdPartyBin returns the absolute path of
// testdata/thirdparty/node_modules/.bin/<name> in this module, where
// scripts/install-thirdparty.sh installs the npm reference servers
// (mcp-server-everything, mcp-server-filesystem, mcp-server-memory,
// conformance, node). If it is missing, the test fails when the CI
// environment variable is set (CI must run them) and is skipped otherwise.
//
// The npm bins start with `#!/usr/bin/env node`; conformance needs Node 22,
// so put the bin directory first on the child's PATH when running it.
func ThirdPartyBin(t testing.TB, name string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("mcptest.ThirdPartyBin: finding the working directory: %v", err) // untested: needs a deleted cwd
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatalf("mcptest.ThirdPartyBin: %v", err)
	}
	bin := filepath.Join(root, "testdata", "thirdparty", "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("third-party MCP binary %q is not installed (%v); run scripts/install-thirdparty.sh", name, err)
		Unavailable(t, "mcptest.ThirdPartyBin: "+msg)
	}
	return bin
}

// moduleRoot walks up from dir to the first directory holding go.mod.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod found in " + dir + " or any parent directory")
		}
		d = parent
	}
}

// ListedScenarios is the scenarios a conformance suite's `list` output
// names in the section whose heading starts with heading ("Server
// scenarios", "Client scenarios"): its lines "  - name", up to the next
// heading.
func ListedScenarios(out []byte, heading string) []string {
	var names []string
	in := false
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		if line != "" && !strings.HasPrefix(line, " ") {
			in = strings.HasPrefix(line, heading)
			continue
		}
		if name, ok := strings.CutPrefix(line, "  - "); ok && in {
			names = append(names, name)
		}
	}
	return names
}

// RequiredScenarios lists the scenarios of side ("server" or "client")
// that the conformance suite run as suite (its command line) with env
// requires for spec revision rev (`conformance list --SIDE
// --requirements REV`). An empty list fails the test.
func RequiredScenarios(t testing.TB, suite, env []string, side, rev string) []string {
	t.Helper()
	args := append(slices.Clone(suite[1:]), "list", "--"+side, "--requirements", rev)
	list := exec.Command(suite[0], args...)
	list.Env = env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("conformance list --%s --requirements %s: %v", side, rev, err)
	}
	names := ListedScenarios(out, strings.ToUpper(side[:1])+side[1:]+" scenarios")
	if len(names) == 0 {
		t.Fatalf("conformance list --%s --requirements %s listed no scenario:\n%s", side, rev, out)
	}
	return names
}
