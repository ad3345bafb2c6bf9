package mcptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("mcptest.ThirdPartyBin: %s (fatal because CI=%s)", msg, ci)
		}
		t.Skip(msg)
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
