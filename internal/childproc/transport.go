package childproc

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sandbox"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// Defaults and limits of a stdio child (docs/decisions.md §4).
const (
	// DefaultCloseGrace is how long Close waits, after closing stdin, for the
	// child to exit before it sends SIGTERM to the group.
	DefaultCloseGrace = 2 * time.Second
	// DefaultTermGrace is how long Close waits after SIGTERM before it sends
	// SIGKILL to the group.
	DefaultTermGrace = 2 * time.Second
	// MaxStderrLine is the longest piece of stderr handed to one Stderr call;
	// a longer line arrives in several pieces, so a child that never writes
	// a newline cannot make us buffer without bound.
	MaxStderrLine = 64 * 1024
)

// defaultStderrDrain bounds the wait for stderr EOF once the child has
// exited and its group has been killed. Only a descendant that left the
// group (or a Stderr callback that blocks) can hold things up that long;
// after the bound we close our end and drop what is left.
const defaultStderrDrain = 500 * time.Millisecond

// Transport is an mcp.Transport that spawns one child per Connect and speaks
// newline-delimited JSON-RPC on its stdin and stdout.
//
// Unlike mcp.CommandTransport, the child runs in its own process group,
// Close signals the whole group, the group is SIGKILLed whenever the child
// exits, stderr is delivered line by line, and no pipe held open by a
// descendant can stall Close.
//
// Set the exported fields before the first Connect and do not change them
// afterwards; Connect and Process are safe for concurrent use.
type Transport struct {
	// Command is the program to run: a name resolved through the PATH of
	// the child's environment (no shell is involved), or a path containing
	// a slash, which is used as given.
	Command string
	// Args are passed verbatim; the child sees Command as its argv[0].
	Args []string
	// Env is the complete environment of the child, usually built with
	// [Env]. Nil means Env(os.Environ(), nil); an empty non-nil slice means
	// an empty environment.
	Env []string
	// Dir is the child's working directory; "" inherits ours, and a relative
	// path is resolved against ours.
	Dir string
	// CommandText and DirText name Command and Dir in error messages (of
	// Connect and ExitErr); "" means Command and Dir themselves. A caller
	// whose Command or Dir came from ${VAR} expansion sets them to the text
	// as written, so that no expanded value, often a secret, is quoted.
	CommandText, DirText string
	// Stderr receives the child's stderr line by line, without the trailing
	// "\n" or "\r\n"; lines longer than [MaxStderrLine] arrive in pieces.
	// Control characters other than tab arrive escaped (termsafe.Text: ESC
	// as \x1b), so a line logged to a terminal cannot drive it.
	// It is called from one goroutine, in order, and must not block for long:
	// a full pipe stalls the child. From its first call on, Process returns
	// the child whose line it is (for its PID). Nil discards stderr.
	Stderr func(line string)
	// CloseGrace is how long Close waits after closing stdin before it sends
	// SIGTERM to the process group; zero or negative means [DefaultCloseGrace].
	CloseGrace time.Duration
	// TermGrace is how long Close waits after SIGTERM before it sends
	// SIGKILL to the process group; zero or negative means [DefaultTermGrace].
	TermGrace time.Duration
	// After is the clock of the shutdown ladder: each grace ends when the
	// channel After returns for it delivers. Nil means the real clock;
	// tests inject one to decide when a grace runs out.
	After func(time.Duration) <-chan time.Time
	// MaxLineLength bounds one inbound JSON-RPC frame in bytes; zero means
	// mcp.DefaultMaxLineLength and a negative value disables the bound
	// (both as in mcp.IOTransport).
	MaxLineLength int
	// Sandbox, when not nil, confines the child (docs/sandbox.md): a
	// re-execution of SandboxExe restricts itself with Landlock, a seccomp
	// filter and resource limits, and enters a network namespace of its
	// own unless the spec allows the network, then execs the command. A path of the
	// spec that does not exist, or a kernel without Landlock (unless
	// BestEffort), fails Connect before anything starts.
	Sandbox *sandbox.Spec
	// SandboxExe is the mcpbridge executable re-executed to confine the
	// child; "" means os.Executable(). Its main (or a test's TestMain)
	// must call sandbox.RunIfExec first.
	SandboxExe string

	// stderrDrain overrides defaultStderrDrain; tests raise it so a slow
	// machine cannot make them lose lines.
	stderrDrain time.Duration

	mu   sync.Mutex
	proc *Process // child of the latest successful start
}

var _ mcp.Transport = (*Transport)(nil)

// Connect starts the child and returns the connection to it.
//
// The child runs in its own process group and, on Linux, gets SIGKILL when
// mcpbridge dies (Pdeathsig): it is started from a thread kept for it
// until it is reaped, since the kernel sends the signal when the starting
// thread ends, whichever goroutine called Connect. The ctx only aborts a Connect that has not
// started the child yet; it is never tied to the child's lifetime.
//
// Closing the connection runs the shutdown ladder of [Process.Close] and
// returns its error. A command that cannot be started returns an error such
// as
//
//	start "nosuchcmd": exec: "nosuchcmd": executable file not found in $PATH
//
// and leaves nothing running.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %q: %w", t.commandText(), err)
	}
	p, err := t.start()
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", t.commandText(), err)
	}
	// sdkwire.LeanConn reads the stream as mcp.IOTransport's connection
	// does, at a fraction of its cost per message.
	return &conn{LeanConn: sdkwire.NewLeanConn(stdoutReader{p}, stdinWriter{p}, t.MaxLineLength, p.Close), p: p}, nil
}

// Process returns the child started by the most recent Connect that got as
// far as starting one, or nil. The supervisor uses it to learn the PID, to
// notice at once that the child died, and as the close barrier: once
// Exited is closed, the child and the rest of its group are gone.
func (t *Transport) Process() *Process {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

// start resolves the command, wires the pipes and starts the child, which
// becomes t's Process. Every pipe end is closed again if the child does not
// start.
func (t *Transport) start() (*Process, error) {
	if t.Command == "" {
		return nil, errors.New("empty command")
	}
	if err := supported(); err != nil {
		return nil, err // only off Linux, where these tests do not run
	}
	env := t.Env
	if env == nil {
		env = Env(os.Environ(), nil)
	}
	path, err := lookPath(t.Command, env)
	if err != nil {
		return nil, t.written(err, path)
	}
	if t.Dir != "" {
		// os.StartProcess would blame the executable for a bad directory
		// ("fork/exec <cmd>: no such file or directory"); say what is wrong.
		info, err := os.Stat(t.Dir)
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", t.written(err, path))
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("working directory %q is not a directory", t.dirText())
		}
	}

	npipes := 2
	if t.Stderr != nil {
		npipes = 3
	}
	var reads, writes [3]*os.File // stdin, stdout, stderr
	closeAll := func(files []*os.File) {
		for _, f := range files {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	for i := range npipes {
		r, w, err := os.Pipe()
		if err != nil {
			// Only when out of file descriptors.
			closeAll(reads[:])
			closeAll(writes[:])
			return nil, fmt.Errorf("create pipe: %w", err)
		}
		reads[i], writes[i] = r, w
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{t.Command}, t.Args...),
		Env:         env,
		Dir:         t.Dir,
		Stdin:       reads[0],
		Stdout:      writes[1],
		SysProcAttr: sysProcAttr(),
	}
	plan, err := t.confine(cmd)
	if err != nil {
		closeAll(reads[:])
		closeAll(writes[:])
		return nil, err
	}
	if t.Stderr != nil {
		// Only when used: a nil *os.File in the interface would not mean "discard".
		cmd.Stderr = writes[2]
	}
	release := make(chan struct{}) // closed once the child is reaped
	err = startOnOwnThread(cmd, release)
	// The child holds its own copies now; ours would keep the pipes from
	// reporting EOF.
	closeAll([]*os.File{reads[0], writes[1], writes[2]})
	if err != nil {
		closeAll([]*os.File{writes[0], reads[1], reads[2]})
		if plan != nil {
			return nil, plan.StartError(err)
		}
		return nil, t.written(err, path)
	}

	p := &Process{
		command:     t.commandText(),
		pid:         cmd.Process.Pid,
		cmd:         cmd,
		stdin:       writes[0],
		stdout:      reads[1],
		stderr:      reads[2],
		closeGrace:  orDefault(t.CloseGrace, DefaultCloseGrace),
		termGrace:   orDefault(t.TermGrace, DefaultTermGrace),
		after:       t.After,
		stderrDrain: orDefault(t.stderrDrain, defaultStderrDrain),
		sandbox:     plan,
		denied:      &denials{plan: plan, home: home(env)},
		release:     release,
		done:        make(chan struct{}),
	}
	// Before the first Stderr call, which may ask Process for the PID.
	t.mu.Lock()
	t.proc = p
	t.mu.Unlock()
	if t.Stderr != nil {
		p.stderrDone = make(chan struct{})
		stderr := t.Stderr
		go p.readStderr(func(line string) {
			_, _ = p.denied.note(line)
			stderr(termsafe.Text(line))
		})
	}
	go p.wait()
	return p, nil
}

// confine turns cmd, when t has a Sandbox, into the re-execution of
// mcpbridge that confines itself and execs the command, and returns the
// plan it follows (nil without a Sandbox).
func (t *Transport) confine(cmd *exec.Cmd) (*sandbox.Plan, error) {
	if t.Sandbox == nil {
		return nil, nil
	}
	plan, err := sandbox.Prepare(*t.Sandbox, sandbox.Start{Path: cmd.Path, Command: t.Command, Dir: t.Dir, Env: cmd.Env})
	if err != nil {
		return nil, err
	}
	self := t.SandboxExe
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("sandbox: finding mcpbridge's executable: %w", err) // untested: needs a broken /proc
		}
	}
	if cmd.Args, err = plan.Command(self, cmd.Path, cmd.Args); err != nil {
		return nil, err
	}
	cmd.Path = self
	plan.SysProcAttr(cmd.SysProcAttr)
	return &plan, nil
}

// startOnOwnThread starts cmd from a goroutine locked to its OS thread,
// which keeps the thread until release is closed. The kernel sends the
// parent-death signal (Pdeathsig) when the thread that forked the child
// ends, not the process, and Go ends a thread whenever a goroutine that
// locked it exits: started from any other thread, a child could be killed
// by an unrelated goroutine's exit. The cost is one parked thread per
// running child.
func startOnOwnThread(cmd *exec.Cmd, release <-chan struct{}) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-release
		}
	}()
	return <-started
}

func (t *Transport) commandText() string { return cmp.Or(t.CommandText, t.Command) }

func (t *Transport) dirText() string { return cmp.Or(t.DirText, t.Dir) }

// written returns err, an error of starting the child (path is the
// resolved command), with the command and the directory it names shown as
// CommandText and DirText: os and os/exec quote the path they failed on.
// err is fresh from them, so it is changed in place.
func (t *Transport) written(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		switch pe.Path {
		case path, t.Command:
			pe.Path = t.commandText()
		case t.Dir:
			pe.Path = t.dirText()
		}
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		ee.Name = t.commandText()
	}
	return err
}

// orDefault returns d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Process is one started child. Its methods are safe for concurrent use.
type Process struct {
	command               string
	pid                   int
	cmd                   *exec.Cmd
	stdin                 *os.File // our write end of the child's stdin
	stdout                *os.File // our read end of the child's stdout
	stderr                *os.File // our read end of the child's stderr; nil if discarded
	closeGrace, termGrace time.Duration
	after                 func(time.Duration) <-chan time.Time // nil: the real clock
	stderrDrain           time.Duration
	sandbox               *sandbox.Plan // nil when not sandboxed
	denied                *denials      // what the sandbox denied, as stderr said
	release               chan struct{} // closed when reaped: frees the thread that started the child

	// sigMu orders group signals against reaping: while the child is not
	// reaped its PID (the group ID) cannot be reused, so a signal sent
	// under sigMu with reaped == false never reaches a stranger.
	sigMu  sync.Mutex
	reaped bool

	stderrDone chan struct{} // closed when readStderr returns; nil without Stderr
	done       chan struct{} // closed when the child is reaped, its group killed and stderr delivered
	exitErr    error         // written before done is closed

	closing   atomic.Bool // Close was called: the child ends on request
	closeOnce sync.Once
	closeErr  error
}

// PID returns the child's process ID, which is also its process group ID.
func (p *Process) PID() int { return p.pid }

// Sandbox returns the plan that confines the child (its Landlock ABI and
// whether it has the network), or nil when it is not sandboxed.
func (p *Process) Sandbox() *sandbox.Plan { return p.sandbox }

// UnreadInput returns how many of the bytes written to the child's stdin it
// has not read yet: all of them while it is still starting up. It fails
// once stdin is closed.
func (p *Process) UnreadInput() (int, error) {
	rc, err := p.stdin.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) { n, ioctlErr = unreadBytes(fd) }); err != nil {
		return 0, err
	}
	return n, ioctlErr
}

// Exited is closed once the child has exited (on its own or by Close), the
// rest of its process group has been SIGKILLed and every stderr line has
// been delivered (or, if a descendant that left the group holds the pipe,
// after a short bound).
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitErr says why the child exited: nil for exit status 0 or while it is
// still running, otherwise an error naming the command and PID that wraps
// the *exec.ExitError, such as
//
//	child "server" (pid 4242): exit status 7
//
// Unlike Close, it also reports deaths by the ladder's own signals
// ("signal: terminated", "signal: killed").
func (p *Process) ExitErr() error {
	select {
	case <-p.done:
		return p.exitErr
	default:
		return nil
	}
}

// Close shuts the child down and waits until it and its group are gone:
// it closes stdin, waits up to CloseGrace for an exit, sends SIGTERM to the
// process group, waits up to TermGrace, sends SIGKILL to the group and waits
// for the exit. It is what closing the connection does; call it directly
// when the session cannot be closed (a hung child).
//
// Close is idempotent and safe to call concurrently with itself and with
// reads and writes on the connection; every call returns the same result.
// The result is ExitErr, except that a death by a signal the ladder sent
// returns nil: being stopped on request is not a failure of the child.
func (p *Process) Close() error {
	p.closing.Store(true)
	p.closeOnce.Do(func() { p.closeErr = p.shutdown() })
	return p.closeErr
}

// shutdown runs the ladder once; see Close.
func (p *Process) shutdown() error {
	_ = p.stdin.Close() // EOF on stdin is the polite request to exit
	var sent []syscall.Signal
	if !p.exitedWithin(p.closeGrace) {
		if p.signalGroup(syscall.SIGTERM) {
			sent = append(sent, syscall.SIGTERM)
		}
		if !p.exitedWithin(p.termGrace) {
			if p.signalGroup(syscall.SIGKILL) {
				sent = append(sent, syscall.SIGKILL)
			}
			<-p.done
		}
	}
	// Unblocks the connection's reader even if a descendant that left the
	// group still holds the child's stdout.
	_ = p.stdout.Close()
	if sig, ok := diedOf(p.exitErr); ok && slices.Contains(sent, sig) {
		return nil
	}
	return p.exitErr
}

// exitedWithin waits up to d, on the ladder's clock, for the child to be
// gone.
func (p *Process) exitedWithin(d time.Duration) bool {
	var elapsed <-chan time.Time
	if p.after != nil {
		elapsed = p.after(d)
	} else {
		timer := time.NewTimer(d)
		defer timer.Stop()
		elapsed = timer.C
	}
	select {
	case <-p.done:
		return true
	case <-elapsed:
		return false
	}
}

// signalGroup sends sig to the child's process group unless the child has
// been reaped already, and reports whether it did.
func (p *Process) signalGroup(sig syscall.Signal) bool {
	p.sigMu.Lock()
	defer p.sigMu.Unlock()
	return !p.reaped && signalGroup(p.pid, sig) == nil
}

// wait reaps the child, then makes sure no member of its group survives it.
func (p *Process) wait() {
	// Wait for the exit without reaping, so the group ID stays reserved
	// while we kill the rest of the group. The error case is one where the
	// child is not ours to wait for, which cmd.Wait reports below.
	_ = waitExited(p.pid)
	p.sigMu.Lock()
	_ = signalGroup(p.pid, syscall.SIGKILL) // grandchildren must not outlive the child
	err := p.cmd.Wait()                     // returns at once: the child is a zombie and no copy goroutines exist
	p.reaped = true
	p.sigMu.Unlock()
	close(p.release)

	if p.stderrDone != nil {
		timer := time.NewTimer(p.stderrDrain)
		select {
		case <-p.stderrDone:
		case <-timer.C:
		}
		timer.Stop()
		_ = p.stderr.Close() // unblocks readStderr if an escaped descendant holds the pipe
		<-p.stderrDone
	}
	if err != nil {
		err = fmt.Errorf("child %q (pid %d): %w", p.command, p.pid, err)
	}
	p.exitErr = err
	close(p.done)
}

// stderrChunk is the read buffer of readStderr: an idle child costs this
// much, and a longer line is collected in a slice that grows only as far
// as the line does (at most MaxStderrLine).
const stderrChunk = 4 << 10

// readStderr hands the child's stderr to deliver line by line until EOF or
// until wait closes the pipe. A line longer than MaxStderrLine arrives in
// pieces of MaxStderrLine bytes.
func (p *Process) readStderr(deliver func(string)) {
	defer close(p.stderrDone)
	br := bufio.NewReaderSize(p.stderr, stderrChunk)
	var long []byte // the start of a line longer than the buffer
	split := false  // the previous piece was cut at MaxStderrLine, not at a newline
	for {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, part...)
			if len(long) >= MaxStderrLine {
				deliver(string(long[:MaxStderrLine]))
				long = append(long[:0], long[MaxStderrLine:]...)
				split = len(long) == 0
			}
			continue
		}
		line := part
		if len(long) > 0 {
			line = append(long, part...)
			long = long[:0]
		}
		ended := err == nil // line ends with its newline
		if ended {
			line = line[:len(line)-1]
		}
		for len(line) > MaxStderrLine {
			deliver(string(line[:MaxStderrLine]))
			line, split = line[MaxStderrLine:], true
		}
		if ended {
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if len(line) == 0 && split {
				// The newline that ends a line already delivered in pieces.
				split = false
				continue
			}
		}
		if ended || len(line) > 0 {
			deliver(string(line))
		}
		split = false
		if err != nil {
			return
		}
	}
}

// stdoutReader is the connection's reading half: the child's stdout.
type stdoutReader struct{ p *Process }

// Read reads the child's stdout. Once Close has closed our end, reads
// report io.EOF: the stream ended on request, it did not fail, and the
// session then reports the close error (the child's exit) instead.
func (r stdoutReader) Read(b []byte) (int, error) {
	n, err := r.p.stdout.Read(b)
	if errors.Is(err, os.ErrClosed) {
		err = io.EOF
	}
	return n, err
}

// Close runs the shutdown ladder. The SDK closes the reader, then the
// writer, and joins their errors; only the reader reports, so the child's
// exit error appears once.
func (r stdoutReader) Close() error { return r.p.Close() }

// stdinWriter is the connection's writing half: the child's stdin.
type stdinWriter struct{ p *Process }

// Write writes to the child's stdin.
func (w stdinWriter) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }

// SetWriteDeadline cuts a write to the child's stdin short, so that the
// connection's Write ends with its context though the child reads nothing.
func (w stdinWriter) SetWriteDeadline(t time.Time) error { return w.p.stdin.SetWriteDeadline(t) }

// Close runs the shutdown ladder if the reader has not; its result is
// reported by stdoutReader.Close.
func (w stdinWriter) Close() error {
	_ = w.p.Close()
	return nil
}
