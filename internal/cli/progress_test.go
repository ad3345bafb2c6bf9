package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
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

// call's progress waits while the server's form is asked, which starts
// on a clean line (the progress line erased, not left above the form as
// if the call were still at it): the latest shows once it is answered;
// once the call has ended, nothing.
func TestCallProgressWaitsForTheForm(t *testing.T) {
	keys, typed := io.Pipe()
	defer typed.Close()
	stderr := &lockedBuffer{}
	e := &env{IO: IO{Stdin: keys, Stderr: stderr, StdinIsTerminal: true, StderrIsTerminal: true}}
	const confirm = "[c]ancel: "
	// ask opens a form and answers its field; the form waits at its
	// confirmation, which "\n" sends.
	ask := func() chan string {
		form := make(chan string, 1)
		go func() {
			got, _ := e.elicitPerson(context.Background(), "asker", formParams(t, "Who?", `{"type":"object","properties":{"name":{"type":"string"}}}`))
			form <- string(got)
		}()
		mcptest.Eventually(t, 10*time.Second, func() bool { return strings.HasSuffix(stderr.String(), "  text: ") }, "no form")
		io.WriteString(typed, "Ada\n")
		mcptest.Eventually(t, 10*time.Second, func() bool { return strings.HasSuffix(stderr.String(), confirm) }, "no confirmation")
		return form
	}
	answer := func(form chan string) {
		io.WriteString(typed, "\n")
		if got := <-form; got != `{"action":"accept","content":{"name":"Ada"}}` {
			t.Fatalf("form answered %s:\n%q", got, stderr.String())
		}
	}
	ctx, end := e.callProgress(context.Background(), "mcp__slow__work", &flags{})
	tool.ReportProgress(ctx, tool.Progress{Progress: 1, Total: 3})
	form := ask()
	if lines := screenLines(stderr.String()); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "1/3") }) {
		t.Errorf("the progress line stayed on the screen with the form:\n%s", strings.Join(lines, "\n"))
	}
	tool.ReportProgress(ctx, tool.Progress{Progress: 2, Total: 3, Message: "older"})
	tool.ReportProgress(ctx, tool.Progress{Progress: 3, Total: 3, Message: "latest"})
	if s := stderr.String(); !strings.HasSuffix(s, confirm) {
		t.Errorf("progress written over the form: %q", s)
	}
	answer(form)
	if s := stderr.String(); strings.Contains(s, "older") || !strings.HasSuffix(s, confirm+"\r\033[Kmcp__slow__work 3/3 (100%) latest") {
		t.Errorf("want the latest progress once the form was answered: %q", s)
	}

	form = ask()
	tool.ReportProgress(ctx, tool.Progress{Progress: 4, Message: "over"})
	end()
	if s := stderr.String(); !strings.HasSuffix(s, confirm) {
		t.Errorf("the call's end erased the form's line: %q", s)
	}
	answer(form)
	if s := stderr.String(); strings.Contains(s, "over") || !strings.HasSuffix(s, confirm) {
		t.Errorf("want nothing more once the form was answered (its opening erased the progress line), no progress of the ended call: %q", s)
	}
}
