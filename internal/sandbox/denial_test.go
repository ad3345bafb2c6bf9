package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A tool that the sandbox refuses a file answers the server's bare EACCES
// ("permission denied") and, below it, what the sandbox denied and the
// key that would allow it; status keeps the same line. A refused write to
// a readable file names sandbox.write.
func TestSandboxDenialOfACall(t *testing.T) {
	mcptest.RequireLandlock(t)
	a := newAttack(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	srv, err := mcpclient.Start(mcpclient.Config{
		ServerName: "probe",
		Transport:  mcpclient.TransportStdio,
		Command:    exe,
		Args:       []string{"-test.run=^$"},
		Env:        map[string]string{probeEnv: "1"},
		Sandbox:    a.spec(),
	}, mcpclient.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(name, path string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"path": path})
		res, err := reg.Execute(ctx, "mcp__probe__"+name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Fatalf("%s %s succeeded in the sandbox: %s", name, path, res.Text())
		}
		return res.Text()
	}

	readDenied := `mcpbridge: the sandbox denied "` + a.secret + `" (outside sandbox.read and sandbox.write): to allow it, add "` +
		a.secret + `" to sandbox.read, or to sandbox.write if the server is to change it`
	writeDenied := `mcpbridge: the sandbox denied "` + a.allowed + `" (readable, outside sandbox.write): to allow it, add "` +
		a.allowed + `" to sandbox.write`
	for _, c := range []struct{ tool, path, want string }{
		{"read", a.secret, readDenied},
		{"write", a.allowed, writeDenied},
	} {
		got := call(c.tool, c.path)
		if !strings.Contains(got, "permission denied") || !strings.HasSuffix(got, "\n"+c.want) {
			t.Errorf("%s %s answered:\n%s\nwant the server's error, then:\n%s", c.tool, c.path, got, c.want)
		}
	}
	// Nothing to add for a file missing, whatever the sandbox allows.
	if got := call("read", filepath.Join(filepath.Dir(a.allowed), "missing")); strings.Contains(got, "mcpbridge:") {
		t.Errorf("a missing file is blamed on the sandbox:\n%s", got)
	}
	want := []string{strings.TrimPrefix(readDenied, "mcpbridge: "), strings.TrimPrefix(writeDenied, "mcpbridge: ")}
	if st := srv.Status(); st.Sandbox == nil || !slices.Equal(st.Sandbox.Denied, want) {
		t.Errorf("status: %+v, want denied %q", st.Sandbox, want)
	}
}
