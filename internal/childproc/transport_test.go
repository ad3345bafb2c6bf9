//go:build linux

package childproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// hangGuard bounds waits that should end at once, so a bug fails the test
// instead of hanging it. It is never used to assert on timing.
const hangGuard = 30 * time.Second

func helperExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// helperTransport returns a Transport that runs the test binary as the
// helper selected by behaviour.
func helperTransport(t *testing.T, behaviour string) *Transport {
	t.Helper()
	return &Transport{Command: helperExe(t), Env: Env(os.Environ(), map[string]string{helperEnv: behaviour, raceEnv: raceFast})}
}

// connect starts tr and closes the connection when the test ends.
func connect(t *testing.T, tr *Transport) mcp.Connection {
	t.Helper()
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// readNote reads the helper's next notification and checks its method.
func readNote(t *testing.T, conn mcp.Connection, method string) helperMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("reading %q notification: %v", method, err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != method {
		t.Fatalf("got %#v, want a %q notification", msg, method)
	}
	var hm helperMsg
	if err := json.Unmarshal(req.Params, &hm); err != nil {
		t.Fatalf("decoding %q params: %v", method, err)
	}
	return hm
}

func awaitExit(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(hangGuard):
		t.Fatalf("child %d did not exit", p.PID())
	}
}

// gone reports whether pid no longer runs; a zombie waiting for init to
// reap it counts as gone.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // vanished between the two looks
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// awaitGone polls until pid is gone, failing after hangGuard.
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists", pid)
		}
		<-tick.C
	}
}

// killLater makes sure pid does not outlive a failed test.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

func TestMCPRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var stderr []string
	tr := helperTransport(t, "mcp")
	tr.Stderr = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		stderr = append(stderr, line)
	}
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "childproc-test", Version: "0.0.1"}, nil)
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	p := tr.Process()
	if p == nil || p.PID() <= 0 {
		t.Fatalf("Process() = %v after Connect, want a started child", p)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated protocol %q, want 2025-11-25", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"greeting": "hello Ada"}, res.StructuredContent); diff != "" {
		t.Errorf("structured result mismatch (-want +got):\n%s", diff)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("session Close: %v", err)
	}
	awaitExit(t, p)
	if err := p.ExitErr(); err != nil {
		t.Errorf("ExitErr = %v, want nil for a clean exit", err)
	}
	if !gone(p.PID()) {
		t.Errorf("child %d still exists after Close", p.PID())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stderr) != 0 {
		t.Errorf("unexpected stderr from the server: %q", stderr)
	}
}

func TestChildEnvironment(t *testing.T) {
	parent := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/tester", "LANG=C.UTF-8",
		"HTTPS_PROXY=http://proxy:3128", "SSH_AUTH_SOCK=/tmp/agent.sock",
		"API_KEY=k", "MY_SECRET=s", "AUTH_TOKEN=t", "MONKEY=m",
		"TOKENIZERS_PARALLELISM=false", "PASSWORD_STORE_DIR=/p",
		"AWS_CREDENTIALS=c", "MCPBRIDGE_CONFIG=/c",
		"GITHUB_TOKEN=from-parent", "OVERRIDDEN=parent",
	}
	overlay := map[string]string{
		helperEnv:      "print-env",
		raceEnv:        raceFast,
		"GITHUB_TOKEN": "ghp_overlay",
		"OVERRIDDEN":   "overlay",
		"EMPTY":        "",
	}
	tr := &Transport{
		Command: helperExe(t),
		Args:    []string{"a b", "$HOME", "*", ""},
		Env:     Env(parent, overlay),
	}
	got := readNote(t, connect(t, tr), "env")
	want := []string{
		helperEnv + "=print-env", "EMPTY=", "GITHUB_TOKEN=ghp_overlay", raceEnv + "=" + raceFast, "HOME=/home/tester",
		"HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "OVERRIDDEN=overlay",
		"PATH=" + os.Getenv("PATH"), "SSH_AUTH_SOCK=/tmp/agent.sock",
	}
	if diff := cmp.Diff(want, got.Env); diff != "" {
		t.Errorf("child environment mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a b", "$HOME", "*", ""}, got.Args); diff != "" {
		t.Errorf("child args mismatch, want them verbatim (-want +got):\n%s", diff)
	}
}

func TestNilEnvMeansScrubbedParent(t *testing.T) {
	t.Setenv(helperEnv, "print-env")
	t.Setenv(raceEnv, raceFast)
	t.Setenv("MY_SECRET", "must-not-leak")
	t.Setenv("MCPBRIDGE_CONFIG", "/etc/mcpbridge.yaml")
	tr := &Transport{Command: helperExe(t)}
	got := readNote(t, connect(t, tr), "env")
	if diff := cmp.Diff(Env(os.Environ(), nil), got.Env); diff != "" {
		t.Errorf("child environment mismatch (-want +got):\n%s", diff)
	}
	for _, kv := range got.Env {
		if strings.HasPrefix(kv, "MY_SECRET=") || strings.HasPrefix(kv, "MCPBRIDGE_CONFIG=") {
			t.Errorf("scrubbed variable reached the child: %s", kv)
		}
	}
}

func TestCommandResolvedThroughChildPath(t *testing.T) {
	bin := t.TempDir()
	if err := os.Symlink(helperExe(t), filepath.Join(bin, "childproc-helper")); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("childproc-helper"); err == nil {
		t.Fatal("childproc-helper is on our own PATH; the test would prove nothing")
	}
	tr := &Transport{
		Command: "childproc-helper",
		Env:     Env(nil, map[string]string{"PATH": "/nonexistent:" + bin, helperEnv: "print-env", raceEnv: raceFast}),
	}
	got := readNote(t, connect(t, tr), "env")
	if diff := cmp.Diff([]string{helperEnv + "=print-env", raceEnv + "=" + raceFast, "PATH=/nonexistent:" + bin}, got.Env); diff != "" {
		t.Errorf("child environment mismatch (-want +got):\n%s", diff)
	}
}

func TestRelativeDir(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	if err := os.MkdirAll(filepath.Join("sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tr := helperTransport(t, "print-env")
	tr.Dir = filepath.Join("sub", "dir")
	got := readNote(t, connect(t, tr), "env")
	want, err := filepath.EvalSymlinks(filepath.Join(base, "sub", "dir"))
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := filepath.EvalSymlinks(got.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	if cwd != want {
		t.Errorf("child cwd = %q, want %q", cwd, want)
	}
}

// openFDs counts our open file descriptors, to catch leaked pipe ends.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestConnectErrors(t *testing.T) {
	exe := helperExe(t)
	notExec := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()

	tests := []struct {
		name    string
		ctx     context.Context
		tr      *Transport
		wantMsg string
		wantIs  error
	}{
		{
			name:    "command not found",
			tr:      &Transport{Command: "nosuchcmd", Env: []string{"PATH=/usr/bin:/bin"}},
			wantMsg: `start "nosuchcmd": exec: "nosuchcmd": executable file not found in $PATH`,
			wantIs:  exec.ErrNotFound,
		},
		{
			name:    "empty command",
			tr:      &Transport{},
			wantMsg: `start "": empty command`,
		},
		{
			name:    "missing working directory",
			tr:      &Transport{Command: exe, Dir: "/nonexistent/dir"},
			wantMsg: fmt.Sprintf(`start %q: working directory: stat /nonexistent/dir: no such file or directory`, exe),
			wantIs:  fs.ErrNotExist,
		},
		{
			name:    "working directory is a file",
			tr:      &Transport{Command: exe, Dir: notExec},
			wantMsg: fmt.Sprintf(`start %q: working directory %q is not a directory`, exe, notExec),
		},
		{
			name:    "canceled context",
			ctx:     canceled,
			tr:      &Transport{Command: exe},
			wantMsg: fmt.Sprintf(`start %q: context canceled`, exe),
			wantIs:  context.Canceled,
		},
		{
			name:    "exec fails after the pipes exist",
			tr:      &Transport{Command: notExec, Stderr: func(string) {}},
			wantMsg: fmt.Sprintf(`start %q: fork/exec %s: permission denied`, notExec, notExec),
			wantIs:  fs.ErrPermission,
		},
		// CommandText and DirText: what came from ${VAR} is never quoted.
		{
			name:    "command not found, as written",
			tr:      &Transport{Command: "nosuch-s3cr3t", CommandText: "${CMD}", Env: []string{"PATH=/usr/bin:/bin"}},
			wantMsg: `start "${CMD}": exec: "${CMD}": executable file not found in $PATH`,
			wantIs:  exec.ErrNotFound,
		},
		{
			name:    "exec fails, as written",
			tr:      &Transport{Command: notExec, CommandText: "${CMD}"},
			wantMsg: `start "${CMD}": fork/exec ${CMD}: permission denied`,
			wantIs:  fs.ErrPermission,
		},
		{
			name:    "missing working directory, as written",
			tr:      &Transport{Command: exe, CommandText: "${EXE}", Dir: "/nonexistent/s3cr3t", DirText: "${DIR}"},
			wantMsg: `start "${EXE}": working directory: stat ${DIR}: no such file or directory`,
			wantIs:  fs.ErrNotExist,
		},
		{
			name:    "working directory is a file, as written",
			tr:      &Transport{Command: exe, Dir: notExec, DirText: "${DIR}/x"},
			wantMsg: fmt.Sprintf(`start %q: working directory "${DIR}/x" is not a directory`, exe),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			fds := openFDs(t)
			conn, err := tt.tr.Connect(ctx)
			if err == nil {
				_ = conn.Close()
				t.Fatal("Connect succeeded, want an error")
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("error = %q\nwant    %q", err, tt.wantMsg)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if p := tt.tr.Process(); p != nil {
				t.Errorf("Process() = pid %d after a failed start, want nil", p.PID())
			}
			if got := openFDs(t); got != fds {
				t.Errorf("open file descriptors: %d before, %d after; pipe ends leaked", fds, got)
			}
			goleak.VerifyNone(t)
		})
	}
}

func TestCloseLadder(t *testing.T) {
	exe := helperExe(t)
	tests := []struct {
		name      string
		behaviour string
		closeG    time.Duration
		termG     time.Duration
		wantClose string // "%d" is the child's PID; "" means nil
		wantExit  string
	}{
		{
			name:      "exits on stdin EOF",
			behaviour: "idle",
		},
		{
			name:      "exit status on EOF is reported",
			behaviour: "exit3-on-eof",
			wantClose: `child %q (pid %d): exit status 3`,
			wantExit:  `child %q (pid %d): exit status 3`,
		},
		{
			name:      "a signal the ladder did not send is reported",
			behaviour: "self-term",
			closeG:    time.Hour, // never reached: the child dies first
			wantClose: `child %q (pid %d): signal: terminated`,
			wantExit:  `child %q (pid %d): signal: terminated`,
		},
		{
			name:      "ignores EOF, exits on SIGTERM",
			behaviour: "ignore-eof",
			closeG:    100 * time.Millisecond,
			termG:     time.Hour, // SIGKILL must not be needed
			wantExit:  `child %q (pid %d): signal: terminated`,
		},
		{
			name:      "ignores EOF and SIGTERM, gets SIGKILL",
			behaviour: "ignore-term",
			closeG:    100 * time.Millisecond,
			termG:     100 * time.Millisecond,
			wantExit:  `child %q (pid %d): signal: killed`,
		},
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := helperTransport(t, tt.behaviour)
			tr.CloseGrace, tr.TermGrace = tt.closeG, tt.termG
			conn := connect(t, tr)
			readNote(t, conn, "ready") // the helper has set up its signal handling
			p := tr.Process()
			killLater(t, p.PID())
			want := func(format string) string {
				if format == "" {
					return ""
				}
				return fmt.Sprintf(format, exe, p.PID())
			}

			select {
			case <-p.Exited():
				t.Fatal("Exited closed while the child waits for EOF")
			default:
			}
			if err := p.ExitErr(); err != nil {
				t.Errorf("ExitErr() = %v while the child runs, want nil", err)
			}

			err := conn.Close()
			if got := errText(err); got != want(tt.wantClose) {
				t.Errorf("Close() = %q, want %q", got, want(tt.wantClose))
			}
			select {
			case <-p.Exited():
			default:
				t.Fatal("Exited not closed when Close returned")
			}
			if got := errText(p.ExitErr()); got != want(tt.wantExit) {
				t.Errorf("ExitErr() = %q, want %q", got, want(tt.wantExit))
			}
			if err := syscall.Kill(p.PID(), 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("kill(%d, 0) = %v after Close, want ESRCH (reaped)", p.PID(), err)
			}
			if again := p.Close(); errText(again) != errText(err) {
				t.Errorf("second Close() = %v, want the first result %v", again, err)
			}
		})
	}
}

func TestGrandchildKilledOnClose(t *testing.T) {
	tr := helperTransport(t, "fork-grandchild")
	conn := connect(t, tr)
	grandchild := readNote(t, conn, "ready").PID
	killLater(t, grandchild)
	p := tr.Process()
	if gone(grandchild) {
		t.Fatalf("grandchild %d is not running before Close; the test would prove nothing", grandchild)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	awaitGone(t, p.PID())
	awaitGone(t, grandchild)
}

func TestChildExitsOnItsOwn(t *testing.T) {
	tr := helperTransport(t, "exit7")
	conn := connect(t, tr)
	grandchild := readNote(t, conn, "ready").PID
	killLater(t, grandchild)
	p := tr.Process()

	awaitExit(t, p) // no Close: the exit must be noticed by itself
	want := fmt.Sprintf("child %q (pid %d): exit status 7", tr.Command, p.PID())
	err := p.ExitErr()
	if err == nil || err.Error() != want {
		t.Fatalf("ExitErr() = %v, want %q", err, want)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 7 {
		t.Errorf("ExitErr() does not wrap an *exec.ExitError with code 7: %#v", err)
	}
	awaitGone(t, grandchild) // killed with the group, before anyone called Close

	// With CommandText, the exit names the command as written.
	tr2 := helperTransport(t, "exit7")
	tr2.CommandText = "${MCP_SERVER}"
	conn2 := connect(t, tr2)
	killLater(t, readNote(t, conn2, "ready").PID)
	awaitExit(t, tr2.Process())
	if err, want := tr2.Process().ExitErr(), fmt.Sprintf(`child "${MCP_SERVER}" (pid %d): exit status 7`, tr2.Process().PID()); err == nil || err.Error() != want {
		t.Errorf("ExitErr() with CommandText = %v, want %q", err, want)
	}

	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Read after the exit = %v, want io.EOF", err)
	}
	if err := conn.Close(); err == nil || err.Error() != want {
		t.Errorf("Close() = %v, want %q", err, want)
	}
}

func TestEscapedGrandchildDoesNotHang(t *testing.T) {
	tr := helperTransport(t, "escape")
	tr.Stderr = func(string) {}
	conn := connect(t, tr)
	grandchild := readNote(t, conn, "ready").PID
	t.Cleanup(func() {
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
		awaitGone(t, grandchild)
	})
	p := tr.Process()

	readErr := make(chan error, 1)
	go func() {
		_, err := conn.Read(t.Context())
		readErr <- err
	}()
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Errorf("pending Read = %v, want io.EOF", err)
	}
	awaitExit(t, p)
	if gone(grandchild) {
		t.Errorf("grandchild %d died; it left the group, so this test did not exercise a held pipe", grandchild)
	}
}

func TestStderrLines(t *testing.T) {
	var mu sync.Mutex
	var got []string
	tr := helperTransport(t, "stderr")
	tr.stderrDrain = hangGuard // a loaded machine must not make the drain bound drop lines
	tr.Stderr = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, line)
	}
	connect(t, tr)
	awaitExit(t, tr.Process()) // every line is delivered before Exited closes
	want := []string{
		"first", "second", "", "third",
		strings.Repeat("x", MaxStderrLine),
		strings.Repeat("y", MaxStderrLine), strings.Repeat("y", MaxStderrLine), strings.Repeat("y", 10),
		`\x1b]0;pwned\x07title` + "\t" + `x\x1b[2J\rover\u009b\xff`, // escaped, tab kept
		"last, without newline",
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stderr lines mismatch (-want +got):\n%s", diff)
	}
}

// TestStderrDeliveredAfterExit holds the Stderr callback until the child has
// been reaped, so the last lines are still in the pipe when it exits: they
// must be delivered, and before Exited closes.
func TestStderrDeliveredAfterExit(t *testing.T) {
	var mu sync.Mutex
	var got []string
	aSeen, proceed := make(chan struct{}), make(chan struct{})
	var release sync.Once
	defer release.Do(func() { close(proceed) })
	tr := helperTransport(t, "stderr-handshake")
	tr.stderrDrain = hangGuard
	tr.Stderr = func(line string) {
		mu.Lock()
		got = append(got, line)
		mu.Unlock()
		if line == "a" {
			close(aSeen)
			<-proceed
		}
	}
	conn := connect(t, tr)
	p := tr.Process()
	select {
	case <-aSeen:
	case <-time.After(hangGuard):
		t.Fatal("first stderr line never arrived")
	}
	if err := conn.Write(t.Context(), &jsonrpc.Request{Method: "go-ahead"}); err != nil {
		t.Fatalf("writing the go-ahead: %v", err)
	}
	deadline := time.Now().Add(hangGuard)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !errors.Is(syscall.Kill(p.PID(), 0), syscall.ESRCH) { // reaped, not just exited
		if time.Now().After(deadline) {
			t.Fatalf("child %d was not reaped", p.PID())
		}
		<-tick.C
	}
	select {
	case <-p.Exited():
		t.Fatal("Exited closed while stderr lines were still undelivered")
	default:
	}
	release.Do(func() { close(proceed) })
	awaitExit(t, p)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("stderr lines mismatch (-want +got):\n%s", diff)
	}
}

func TestCloseConcurrentWithRead(t *testing.T) {
	tr := helperTransport(t, "idle")
	conn := connect(t, tr)
	readNote(t, conn, "ready")
	p := tr.Process()

	readErr := make(chan error, 1)
	go func() {
		_, err := conn.Read(t.Context())
		readErr <- err
	}()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			if i%2 == 0 {
				errs[i] = conn.Close()
			} else {
				errs[i] = p.Close()
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff(make([]error, 4), errs, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("Close results mismatch (-want +got):\n%s", diff)
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Errorf("pending Read = %v, want io.EOF", err)
	}
}

// A write to a child that does not read its stdin ends with the
// writer's context (a call's timeout), not when the child does; the
// connection then closes as usual.
func TestWriteToStuckChildEndsWithContext(t *testing.T) {
	tr := helperTransport(t, "sleep") // never reads its stdin
	conn := connect(t, tr)
	big := &jsonrpc.Request{Method: "notifications/big", Params: json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`)}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	written := make(chan error, 1)
	go func() { written <- conn.Write(ctx, big) }()
	select {
	case err := <-written:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Write = %v, want the context's deadline", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Write to a child that does not read still blocked after its context ended")
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// UnreadInput counts what the child has not read of its stdin: all of it
// while the child reads nothing, none once it has read it.
func TestUnreadInput(t *testing.T) {
	msg := &jsonrpc.Request{Method: "notifications/x"}
	frame, _ := jsonrpc.EncodeMessage(msg)
	for _, tc := range []struct {
		behaviour string
		want      int
	}{
		{"sleep", len(frame) + 1}, // never reads
		{"idle", 0},               // reads until EOF
	} {
		tr := helperTransport(t, tc.behaviour)
		conn := connect(t, tr)
		if err := conn.Write(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(hangGuard)
		n, err := tr.Process().UnreadInput()
		for err == nil && n != tc.want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			n, err = tr.Process().UnreadInput()
		}
		if err != nil || n != tc.want {
			t.Errorf("%s: UnreadInput = %d, %v; want %d", tc.behaviour, n, err, tc.want)
		}
		conn.Close()
		if _, err := tr.Process().UnreadInput(); err == nil {
			t.Errorf("%s: UnreadInput after Close did not fail", tc.behaviour)
		}
	}
}

func TestMaxLineLength(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		wantErr bool
	}{
		{name: "frame above the limit fails", limit: 1024, wantErr: true},
		{name: "default limit admits it", limit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := helperTransport(t, "big-line")
			tr.MaxLineLength = tt.limit
			conn := connect(t, tr)
			ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
			defer cancel()
			msg, err := conn.Read(ctx)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Read = %v, want a frame-too-large error", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			var hm helperMsg
			if err := json.Unmarshal(msg.(*jsonrpc.Request).Params, &hm); err != nil {
				t.Fatal(err)
			}
			if len(hm.Blob) != 4096 {
				t.Errorf("blob length %d, want 4096", len(hm.Blob))
			}
		})
	}
}

func TestPdeathsig(t *testing.T) {
	tr := helperTransport(t, "spawner")
	conn := connect(t, tr)
	inner := readNote(t, conn, "ready").PID
	killLater(t, inner)
	p := tr.Process()
	// The inner child ignores EOF and SIGTERM and has its own group, so
	// only Pdeathsig can end it when its parent dies.
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, inner)
	want := fmt.Sprintf("child %q (pid %d): signal: killed", tr.Command, p.PID())
	if err := conn.Close(); err == nil || err.Error() != want {
		t.Errorf("Close() = %v, want %q (we, not the ladder, sent the signal)", err, want)
	}
}

func TestOrDefault(t *testing.T) {
	tests := []struct{ d, want time.Duration }{
		{0, DefaultCloseGrace},
		{-time.Second, DefaultCloseGrace},
		{time.Millisecond, time.Millisecond},
	}
	for _, tt := range tests {
		if got := orDefault(tt.d, DefaultCloseGrace); got != tt.want {
			t.Errorf("orDefault(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}
