package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/report"
)

// status shows which entries are sandboxed, at which Landlock ABI; an
// entry whose sandbox names a path that does not exist fails alone, with
// the path as written, while the others keep working.
func TestStatusShowsSandbox(t *testing.T) {
	abi := mcptest.RequireLandlock(t)
	cfg := writeConfig(t, sandboxedDemo("plain", "")+
		sandboxedDemo("boxed", "    sandbox: {}\n")+
		sandboxedDemo("missing", "    sandbox:\n      read: [/no/such/dir]\n"))

	r := mcpbridge(t, "", "status", "--json", "--config", cfg)
	if r.code != ExitFailed {
		t.Errorf("exit %d, want %d (one entry failed)", r.code, ExitFailed)
	}
	var out report.Status
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	type row struct {
		State   string
		Sandbox *report.Sandbox
		Error   string
	}
	got := map[string]row{}
	for _, s := range out.Servers {
		got[s.ID] = row{s.State, s.Sandbox, s.Error}
	}
	want := map[string]row{
		"plain":   {State: "ready"},
		"boxed":   {State: "ready", Sandbox: &report.Sandbox{LandlockABI: abi}},
		"missing": {State: "failed", Sandbox: &report.Sandbox{LandlockABI: abi}, Error: `sandbox.read[0] "/no/such/dir": no such file or directory`},
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

// sandboxedDemo is an entry running the demo server, with extra lines of its
// config (indented by four spaces).
func sandboxedDemo(id, extra string) string {
	return "- id: " + id + "\n  name: mcp-client\n  config:\n    serverName: " + id +
		"\n    transport: stdio\n    command: ${MCPBRIDGE_EXE}\n    args: [demo-server]\n" + extra
}

// ~ and ${HOME} in sandbox paths are the home directory, as in a shell: a
// new user's read: [~/notes] starts its server confined (it failed with
// sandbox.read[0] "~/notes": no such file or directory).
func TestSandboxHomePaths(t *testing.T) {
	abi := mcptest.RequireLandlock(t)
	home := t.TempDir()
	for _, dir := range []string{"notes", "out"} {
		if err := os.Mkdir(filepath.Join(home, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	cfg := writeConfig(t, sandboxedDemo("boxed", "    sandbox:\n      read: [~/notes]\n      write: ['${HOME}/out']\n"))
	r := mcpbridge(t, "", "status", "--json", "--config", cfg)
	var out report.Status
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	if r.code != ExitOK || len(out.Servers) != 1 || out.Servers[0].State != "ready" || out.Servers[0].Sandbox == nil ||
		out.Servers[0].Sandbox.LandlockABI != abi {
		t.Errorf("exit %d, want a ready server sandboxed at Landlock %d:\n%s\n%s", r.code, abi, r.stdout, r.stderr)
	}
}

// validate, which starts nothing, reports each sandbox path that does not
// exist where the file writes it (it passed them, to fail at the start).
func TestValidateSandboxPaths(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	cfg := writeConfig(t, sandboxedDemo("boxed", "    sandbox:\n      read: [~/notes, ~/no-such]\n      write: [/no/such/dir]\n")+
		sandboxedDemo("off", "    sandbox: {write: [/no/such]}\n")+"  disabled: true\n")
	r := mcpbridge(t, "", "validate", "--config", cfg)
	const why = ": no such file or directory: the sandbox can only allow a path that exists (create it, or correct the path)\n"
	want := "mcpbridge: invalid config:\n" +
		cfg + `:9:23: entry "boxed": config.sandbox.read[1]: "~/no-such"` + why +
		cfg + `:10:15: entry "boxed": config.sandbox.write[0]: "/no/such/dir"` + why
	if r.code != ExitUsage || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr:\n%s\nwant:\n%s", r.code, ExitUsage, r.stdout, r.stderr, want)
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

// A server whose start the sandbox breaks (a script in home that execs a
// program elsewhere in home) fails with what was denied and what to add,
// not a bare EOF; adding it as said starts the server.
func TestSandboxDenialSaysWhatToAdd(t *testing.T) {
	mcptest.RequireLandlock(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	program, script := filepath.Join(home, "tools", "server"), filepath.Join(home, "bin", "server")
	for _, dir := range []string{filepath.Dir(program), filepath.Dir(script)} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(exe, program); err != nil {
		t.Fatal(err) // t.TempDir and the test binary share /tmp
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec \""+program+"\" \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	entry := func(sandbox string) string {
		return "- id: tool\n  name: mcp-client\n  config:\n    serverName: tool\n    transport: stdio\n" +
			"    command: " + script + "\n    args: [demo-server]\n    sandbox: " + sandbox + "\n"
	}

	r := mcpbridge(t, "", "status", "--json", "--config", writeConfig(t, entry("{}")))
	var out report.Status
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	want := `the sandbox denied "` + program + `" (outside sandbox.read and sandbox.write): to allow it, add "` + program +
		`" to sandbox.read, or to sandbox.write if the server is to change it`
	if r.code != ExitFailed || len(out.Servers) != 1 || !strings.Contains(out.Servers[0].Error, want) {
		t.Errorf("exit %d, want %d and an error saying\n%s\ngot:\n%s", r.code, ExitFailed, want, r.stdout)
	}

	r = mcpbridge(t, "", "status", "--json", "--config", writeConfig(t, entry("{read: [~/tools/server]}")))
	if r.code != ExitOK {
		t.Errorf("with the path added: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// What the sandbox denied a running server follows the table, one line
// each, as a failure's reason does, and is in status --json.
func TestStatusShowsDenials(t *testing.T) {
	const denied = `the sandbox denied "/home/ann/.ssh/config" (outside sandbox.read and sandbox.write): to allow it, add "/home/ann/.ssh/config" to sandbox.read, or to sandbox.write if the server is to change it`
	st := host.Status{ID: "fs", Name: "fs", State: host.StateReady, Transport: "stdio",
		Sandbox: &host.SandboxStatus{LandlockABI: 7, Denied: []string{denied}}}
	var b strings.Builder
	writeStatusTable(&b, []host.Status{st}, nil, nil)
	if want := "\nfs: sandbox: " + denied + "\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("status table:\n%s\nwant it to end with:%s", b.String(), want)
	}
	if got := report.ServerOf(st).Sandbox; got == nil || len(got.Denied) != 1 || got.Denied[0] != denied {
		t.Errorf("status --json sandbox: %+v", got)
	}
}
