package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	want := Version + " (module v0.2.0, commit 0123456789ab (2026-12-01T10:00:00Z), modified, go1.26.8)"
	if got := describe(bi); got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got := describe(bi); got != Version+" (module (devel), go1.26.8)" {
		t.Errorf("describe without vcs = %q", got)
	}
	if got := Describe(); !strings.HasPrefix(got, Version+" (module ") {
		t.Errorf("Describe = %q", got)
	}
}
