package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// status shows which entries are sandboxed, at which Landlock ABI; an
// entry whose sandbox names a path that does not exist fails alone, with
// the path as written, while the others keep working.
func TestStatusShowsSandbox(t *testing.T) {
	abi := mcptest.RequireLandlock(t)
	entry := func(id, extra string) string {
		return "- id: " + id + "\n  name: mcp-client\n  config:\n    serverName: " + id +
			"\n    transport: stdio\n    command: ${MCPBRIDGE_EXE}\n    args: [demo-server]\n" + extra
	}
	cfg := writeConfig(t, entry("plain", "")+
		entry("boxed", "    sandbox: {}\n")+
		entry("missing", "    sandbox:\n      read: [/no/such/dir]\n"))

	r := mcpbridge(t, "", "status", "--json", "--config", cfg)
	if r.code != ExitFailed {
		t.Errorf("exit %d, want %d (one entry failed)", r.code, ExitFailed)
	}
	var out statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	type row struct {
		State   string
		Sandbox *sandboxJSON
		Error   string
	}
	got := map[string]row{}
	for _, s := range out.Servers {
		got[s.ID] = row{s.State, s.Sandbox, s.Error}
	}
	want := map[string]row{
		"plain":   {State: "ready"},
		"boxed":   {State: "ready", Sandbox: &sandboxJSON{LandlockABI: abi}},
		"missing": {State: "failed", Sandbox: &sandboxJSON{LandlockABI: abi}, Error: `sandbox.read[0] "/no/such/dir": no such file or directory`},
	}
	for id, w := range want {
		g := got[id]
		if strings.Contains(g.Error, w.Error) {
			g.Error = w.Error // the start error has more around it
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s (-want +got):\n%s", id, diff)
		}
	}

	r = mcpbridge(t, "", "status", "--config", cfg)
	if want := "stdio (sandbox, Landlock "; !strings.Contains(r.stdout, want) {
		t.Errorf("the status table does not show the sandbox (%q):\n%s", want, r.stdout)
	}
}

func TestTransportText(t *testing.T) {
	for _, tt := range []struct {
		st   host.Status
		want string
	}{
		{host.Status{Transport: "stdio"}, "stdio"},
		{host.Status{Transport: "stdio", Sandbox: &host.SandboxStatus{LandlockABI: 7}}, "stdio (sandbox, Landlock 7)"},
		{host.Status{Transport: "stdio", Sandbox: &host.SandboxStatus{}}, "stdio (sandbox, no Landlock)"},
	} {
		if got := transportText(tt.st); got != tt.want {
			t.Errorf("transportText(%+v) = %q, want %q", tt.st.Sandbox, got, tt.want)
		}
	}
}
