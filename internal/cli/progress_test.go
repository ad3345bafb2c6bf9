package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// lockedBuffer is a bytes.Buffer safe for the spinner to write while a
// server's handshake reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// On a terminal, stderr shows which servers are still connecting: the slow
// server holds its handshake until the spinner has named it.
func TestProgressOnTerminal(t *testing.T) {
	var stderr lockedBuffer
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	mcptest.HoldHandshake(srv, func(ctx context.Context) error {
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(stderr.String(), "connecting 1/2: slow") {
			if time.Now().After(deadline) {
				return errors.New("the spinner never named the slow server")
			}
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{})
	quick := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(`- {id: slow, name: mcp-client, config: {serverName: slow, transport: streamable-http, url: %s}}
- {id: empty, name: mcp-client, config: {serverName: empty, transport: streamable-http, url: %s, enabledTools: [nothing]}}
`, hs.URL, quick.URL))
	var stdout bytes.Buffer
	code := Main(context.Background(), IO{
		Args:             []string{"status", "-v", "--config", cfg},
		Stdout:           &stdout,
		Stderr:           &stderr,
		StderrIsTerminal: true,
	})
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stderr.String()
	if !strings.Contains(out, "connecting 1/2: slow") || !strings.Contains(out, "\r\033[K") {
		t.Errorf("no progress line:\n%q", out)
	}
	// -v shows the host's lines, tagged with the entry.
	if !hasTextRecord(out, "INFO", "added, starting", "entry", "slow") {
		t.Errorf("no host log line:\n%s", out)
	}
}

// With --json there are no spinners, even on a terminal (docs/decisions.md §7).
func TestNoProgressWithJSON(t *testing.T) {
	t.Setenv(mainEnv, "1")
	t.Chdir(t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), IO{
		Args:   []string{"tools", "--json"},
		Stdout: &stdout, Stderr: &stderr,
		StderrIsTerminal: true,
		LookupEnv: func(k string) (string, bool) {
			if k == "MCPBRIDGE_EXE" {
				return exe, true
			}
			return "", false
		},
	})
	if code != ExitOK || stderr.Len() != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
