package mcppeer_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestRunChildBadSetup(t *testing.T) {
	dir := t.TempDir()
	badJSON := filepath.Join(dir, "bad.json")
	unknownField := filepath.Join(dir, "unknown.json")
	if err := os.WriteFile(badJSON, []byte(`{"pages":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unknownField, []byte(`{"page":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kind, script string
		want               string
	}{
		{"unknown kind", "nope", "", `MCPTEST_CHILD="nope" is not a child kind`},
		{"raw without script", "raw", "", "MCPTEST_RAW_SCRIPT must name a JSON RawScript file"},
		{"raw with missing script", "raw", filepath.Join(dir, "missing.json"), "reading the raw script"},
		{"raw with bad JSON", "raw", badJSON, "decoding the raw script"},
		{"raw with an unknown field", "raw", unknownField, `unknown field "page"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			getenv := func(k string) string {
				if k == mcppeer.RawScriptEnv {
					return tc.script
				}
				return ""
			}
			status := mcppeer.RunChild(context.Background(), tc.kind, getenv, io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, &stderr, nil)
			if status != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("status %d stderr %q, want 2 and %q", status, stderr.String(), tc.want)
			}
		})
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestRunChildFixtureInProcess runs the fixture child on pipes: the crash
// tool reaches the exit function with status 7, and closing stdin ends the
// child with status 0.
func TestRunChildFixtureInProcess(t *testing.T) {
	p := newPipes()
	exits := make(chan int, 1)
	var stderr syncBuffer
	status := make(chan int, 1)
	go func() {
		status <- mcppeer.RunChild(context.Background(), "fixture", os.Getenv, p.serverR, p.serverW, &stderr, func(code int) { exits <- code })
	}()
	onStart, started := signal()
	cs, err := newClient(&mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { onStart() },
	}).Connect(context.Background(), &mcp.IOTransport{Reader: p.clientR, Writer: p.clientW}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "crash", Want: mcptest.Blocks(mcptest.TextBlock("crashing"))})
	if code := waitFor(t, exits, "the crash exit"); code != mcppeer.CrashExitStatus {
		t.Errorf("exit(%d), want %d", code, mcppeer.CrashExitStatus)
	}

	ctx, cancel := context.WithCancel(context.Background())
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600000}}
	params.SetProgressToken(1)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params)
		errc <- err
	}()
	waitFor(t, started, "the slow call's start")
	cancel()
	waitFor(t, errc, "the cancelled call")
	mcptest.Eventually(t, waitLimit, func() bool { return stderr.String() == "cancelled\n" }, `"cancelled" on stderr`)

	cs.Close()
	if code := waitFor(t, status, "the child to end"); code != 0 {
		t.Errorf("status after stdin closed = %d, want 0 (stderr %q)", code, stderr.String())
	}
}

func TestRunChildFixtureSessionError(t *testing.T) {
	var stderr strings.Builder
	// A reader that fails makes the session end with that error.
	status := mcppeer.RunChild(context.Background(), "fixture", os.Getenv, io.NopCloser(errReader{}), nopWriteCloser{io.Discard}, &stderr, nil)
	if status != 1 || !strings.Contains(stderr.String(), "mcptest child: serving on stdio") {
		t.Errorf("status %d stderr %q, want 1 and a serving error", status, stderr.String())
	}
}

func TestRunChildRaw(t *testing.T) {
	path := mcptest.WriteRawScript(t, mcppeer.RawScript{ServerName: "scripted"})
	getenv := func(k string) string {
		if k == mcppeer.RawScriptEnv {
			return path
		}
		return ""
	}
	t.Run("serves until EOF", func(t *testing.T) {
		in := io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n"))
		var out strings.Builder
		if status := mcppeer.RunChild(context.Background(), "raw", getenv, in, nopWriteCloser{&out}, io.Discard, nil); status != 0 {
			t.Errorf("status = %d, want 0", status)
		}
		var got struct {
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil || got.Result.ServerInfo.Name != "scripted" {
			t.Errorf("reply %q (%v), want serverInfo.name scripted", out.String(), err)
		}
	})
	t.Run("write failure", func(t *testing.T) {
		in := io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		var stderr strings.Builder
		status := mcppeer.RunChild(context.Background(), "raw", getenv, in, nopWriteCloser{errWriter{}}, &stderr, nil)
		if status != 1 || !strings.Contains(stderr.String(), "writing a reply") {
			t.Errorf("status %d stderr %q, want 1 and a write error", status, stderr.String())
		}
	})
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("stdout gone") }
