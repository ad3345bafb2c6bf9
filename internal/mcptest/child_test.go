package mcptest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

func TestChildCommand(t *testing.T) {
	command, args, env := ChildCommand(t, "raw", "A=1", "B=x=y", "C=")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if command != exe {
		t.Errorf("command = %q, want the test binary %q", command, exe)
	}
	if diff := cmp.Diff([]string{"-test.run=^$"}, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	want := map[string]string{mcppeer.ChildEnv: "raw", mcppeer.CrashDirEnv: dumpDir(), "A": "1", "B": "x=y", "C": ""}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestChildCommandRejectsBadInput(t *testing.T) {
	tests := []struct {
		name, kind string
		extra      []string
		want       string
	}{
		{"unknown kind", "fixtur", nil, `kind "fixtur" is not a child kind`},
		{"entry without =", "fixture", []string{"NOVALUE"}, `extraEnv entry "NOVALUE" is not KEY=VALUE`},
		{"entry without key", "fixture", []string{"=v"}, `extraEnv entry "=v" is not KEY=VALUE`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := runFake(t, func(tb testing.TB) { ChildCommand(tb, tc.kind, tc.extra...) })
			if !strings.Contains(f.fatal, tc.want) {
				t.Errorf("fatal = %q, want it to contain %q", f.fatal, tc.want)
			}
		})
	}
}

func TestWriteRawScript(t *testing.T) {
	script := SampleRawScript()
	path := WriteRawScript(t, script)
	got, err := mcppeer.ReadRawScript(path)
	if err != nil {
		t.Fatalf("ReadRawScript: %v", err)
	}
	// RawMessage values round-trip as compact JSON; compare re-encoded.
	if diff := cmp.Diff(AsJSON(t, script), AsJSON(t, got)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if other := WriteRawScript(t, mcppeer.RawScript{}); other == path {
		t.Errorf("two scripts share the path %s", path)
	}
	bad := mcppeer.RawScript{Results: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}
	f := runFake(t, func(tb testing.TB) { WriteRawScript(tb, bad) })
	if !strings.Contains(f.fatal, "encoding the script") {
		t.Errorf("fatal = %q, want an encoding error", f.fatal)
	}
}
