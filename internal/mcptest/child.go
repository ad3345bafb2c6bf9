package mcptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// ChildCommand returns what a config needs to spawn this test binary as a
// stdio MCP server of the given kind ("fixture" or "raw"): the binary's
// path, args that run no tests, and the env overlay with
// mcppeer.ChildEnv=kind plus extraEnv ("KEY=VALUE" entries, e.g.
// mcppeer.RawScriptEnv+"="+path). The test's TestMain must call
// [mcppeer.RunIfChild]. A bad kind or entry fails the test.
func ChildCommand(t testing.TB, kind string, extraEnv ...string) (command string, args []string, env map[string]string) {
	t.Helper()
	if !slices.Contains(mcppeer.ChildKinds(), kind) {
		t.Fatalf("mcptest.ChildCommand: kind %q is not a child kind (want one of %v)", kind, mcppeer.ChildKinds())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("mcptest.ChildCommand: finding the test binary: %v", err) // untested: needs a broken /proc
	}
	env = map[string]string{mcppeer.ChildEnv: kind}
	if dir := dumpDir(); dir != "" {
		env[mcppeer.CrashDirEnv] = dir // the watchdog prints what lands there
	}
	for _, kv := range extraEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			t.Fatalf("mcptest.ChildCommand: extraEnv entry %q is not KEY=VALUE", kv)
		}
		env[k] = v
	}
	return exe, []string{"-test.run=^$"}, env
}

// WriteRawScript writes script as JSON to a file in a new t.TempDir() and
// returns its path, for mcppeer.RawScriptEnv of a "raw" child.
func WriteRawScript(t testing.TB, script mcppeer.RawScript) string {
	t.Helper()
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatalf("mcptest.WriteRawScript: encoding the script: %v", err)
	}
	path := filepath.Join(t.TempDir(), "raw-script.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("mcptest.WriteRawScript: %v", err) // untested: t.TempDir is always writable
	}
	return path
}
