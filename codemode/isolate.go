package codemode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Each program runs in a process of its own: the program that links this
// package, run again (childArg). goja stops JavaScript at its next
// instruction when interrupted, but not a builtin running in Go, which
// the length guards (sandbox.go) can only partly foresee: JSON.stringify
// of one object shared forty levels deep writes 2^40 elements, a join of
// a thousand 16 MiB strings builds 16 GB, an iterator the engine keeps
// for arguments objects walks four billion holes. In the caller's process
// one such call exhausted its memory (and a gateway's every session with
// it) or held a goroutine for ever. In its own, its address space is
// capped (limitMemory) and it is killed past its time limit: the caller
// learns why and goes on, and no program shares memory with another
// caller's.

// killGrace is how long past its time limit, or its caller's cancel, a
// program's process may take to stop by itself before it is killed.
const killGrace = time.Second

// runIsolated runs program in a process of its own; view's calls are made
// here, in ctx, as the process asks for them.
func runIsolated(ctx context.Context, view View, api *API, program string, opts Options) (Result, error) {
	p, err := startProcess(view, opts)
	if err != nil {
		return Result{}, err
	}
	p.send(childRequest{Program: program, Tools: wireToolsOf(api), Options: wireOptionsOf(opts)})
	return p.serve(ctx)
}

// process is one program's process, seen from Run.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tail
	view   View
	opts   Options
	sem    chan struct{} // calls in flight, as the runner bounds them

	wmu sync.Mutex // one line at a time on in

	mu     sync.Mutex
	calls  int                           // asked for so far
	cancel map[uint64]context.CancelFunc // of the calls in flight; guarded by mu
	wg     sync.WaitGroup                // the calls' goroutines
}

func startProcess(view View, opts Options) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("code mode: finding this program, to run the code in: %w", err) // untested: the executable is always known on Linux
	}
	cmd := exec.Command(self, childArg)
	cmd.Env = childEnv()
	p := &process{cmd: cmd, stderr: &tail{max: 4 << 10}, view: view, opts: opts,
		sem: make(chan struct{}, opts.MaxConcurrent), cancel: map[uint64]context.CancelFunc{}}
	cmd.Stderr = p.stderr
	if p.in, err = cmd.StdinPipe(); err == nil {
		var out io.Reader
		out, err = cmd.StdoutPipe()
		p.out = bufio.NewReaderSize(out, 64<<10)
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("code mode: starting the program's process: %w", err)
	}
	return p, nil
}

// childEnv is the environment of a program's process: nothing of the
// caller's (its secrets have no business there) but how Go itself runs
// (a race-enabled test binary's exit, a coverage build's counters).
func childEnv() []string {
	var env []string
	for _, key := range []string{"GORACE", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(key); ok {
			env = append(env, key+"="+v)
		}
	}
	return env
}

// serve answers the process until the program ends, and returns its
// result; it returns once the process has exited and every call it asked
// for has returned.
func (p *process) serve(ctx context.Context) (Result, error) {
	msgs := make(chan childMessage)
	go p.read(msgs)
	deadline := time.NewTimer(p.opts.Timeout + killGrace)
	defer deadline.Stop()
	cancelled, stopped := ctx.Done(), (<-chan time.Time)(nil)
	var done *wireDone
	var killed error
	for done == nil {
		select {
		case m, ok := <-msgs:
			switch {
			case !ok:
				return p.end(ctx, nil, nil, killed)
			case m.Call != nil:
				p.call(ctx, *m.Call)
			case m.Cancel != 0:
				p.cancelCall(m.Cancel)
			case m.Done != nil:
				done = m.Done
			}
		case <-cancelled:
			p.send(parentMessage{Stop: "the program was cancelled: " + cmpCause(ctx).Error()})
			cancelled, stopped = nil, time.After(killGrace)
		case <-stopped:
			killed = &Error{Err: cmpCause(ctx), Message: "the program was cancelled and did not stop: its process was killed"}
			p.cmd.Process.Kill()
		case <-deadline.C:
			killed = &Error{Err: ErrTimeLimit, Message: fmt.Sprintf("%v (%s) and did not stop (a builtin ran on past it): its process was killed; do less per program",
				ErrTimeLimit, p.opts.Timeout)}
			p.cmd.Process.Kill()
		}
	}
	return p.end(ctx, msgs, done, nil)
}

// end lets the process go (its stdin closed, killed if it does not exit
// within killGrace), drains msgs when the reader still runs, ends the
// calls in flight, and waits for all of it. It returns what done says,
// or, without it, why the process ended (killed: why it was killed).
func (p *process) end(ctx context.Context, msgs <-chan childMessage, done *wireDone, killed error) (Result, error) {
	p.in.Close()
	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
		case <-time.After(killGrace):
			p.cmd.Process.Kill()
		}
	}()
	if msgs != nil {
		for range msgs { // until the process closes its stdout
		}
	}
	p.cmd.Wait()
	close(exited)
	p.mu.Lock()
	for _, cancel := range p.cancel {
		cancel()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if done != nil {
		return done.Result, done.Error.err(ctx)
	}
	return Result{}, p.crashed(ctx, killed)
}

// read decodes the process's lines into msgs, and closes msgs when its
// stdout ends (or carries what is not a message: it is then killed).
func (p *process) read(msgs chan<- childMessage) {
	defer close(msgs)
	for {
		line, err := readLine(p.out)
		if len(line) > 0 && err == nil || err == io.EOF && len(line) > 0 {
			var m childMessage
			if json.Unmarshal(line, &m) != nil {
				p.cmd.Process.Kill()
				io.Copy(io.Discard, p.out) // untested: the process writes only messages
				return
			}
			msgs <- m
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.cmd.Process.Kill() // a line over maxLine
				io.Copy(io.Discard, p.out)
			}
			return
		}
	}
}

// call makes the call the process asked for, through the view, in ctx,
// and answers it.
func (p *process) call(ctx context.Context, c wireCall) {
	cctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.calls++
	over := p.calls > p.opts.MaxCalls
	p.cancel[c.ID] = cancel
	p.mu.Unlock()
	p.wg.Go(func() {
		defer p.cancelCall(c.ID)
		reply := wireReply{ID: c.ID}
		if over {
			reply.Error = fmt.Sprintf("code mode: more than %d calls", p.opts.MaxCalls) // untested: the process stops its program first
		} else {
			res, err := p.callView(cctx, c)
			reply.Result, reply.Wire = res, res.Wire
			if err != nil {
				reply.Error = err.Error()
			}
		}
		p.send(parentMessage{Reply: &reply})
	})
}

// callView is one call of the view, once a slot is free.
func (p *process) callView(ctx context.Context, c wireCall) (tool.Result, error) {
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	case <-ctx.Done():
		return tool.Result{}, context.Cause(ctx)
	}
	res, err := p.view.Call(ctx, c.Name, c.Args)
	if err == nil && p.opts.Attachments != nil {
		res = keepAttachments(ctx, p.opts.Attachments, res)
	}
	return res, err
}

// cancelCall ends the call id, if still in flight.
func (p *process) cancelCall(id uint64) {
	p.mu.Lock()
	cancel := p.cancel[id]
	delete(p.cancel, id)
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// send writes m to the process as one line; a failed write means it is
// gone, which the reader sees.
func (p *process) send(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		return // untested: the messages are JSON
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.in.Write(append(b, '\n'))
}

// crashed is why a process ended without a result: killed (the time
// limit, a cancel that was not heeded), out of memory, or something else,
// which its last words on stderr say.
func (p *process) crashed(ctx context.Context, killed error) error {
	words := p.stderr.String()
	switch {
	case killed != nil:
		return killed
	case ctx.Err() != nil:
		return &Error{Err: cmpCause(ctx), Message: "the program was cancelled: " + cmpCause(ctx).Error()}
	case outOfMemory(words):
		return &Error{Err: ErrMemoryLimit, Message: fmt.Sprintf("%v: its process ran out of the memory it may map (the program's heap may grow by %d MiB) and was stopped: keep less in memory, and build no huge string or array at once",
			ErrMemoryLimit, p.opts.MaxMemory>>20)}
	}
	return &Error{Err: ErrThrown, Message: fmt.Sprintf("code mode: the program's process ended (%v): %s", p.cmd.ProcessState, firstLines(words, 3))}
}

// outOfMemory reports whether a Go process's last words say it could not
// get memory (the heap, a thread's stack, or the race detector's shadow).
func outOfMemory(words string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to allocate", "pthread_create failed", "stack overflow", "goroutine stack exceeds"} {
		if strings.Contains(words, s) {
			return true
		}
	}
	return false
}

// firstLines returns the first n lines of s, without surrounding space.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[:min(n, len(lines))], " / ")
}

// tail keeps the first and the last max bytes written to it: a Go
// process's fatal error says why first, then dumps its goroutines.
type tail struct {
	mu         sync.Mutex
	max        int
	head, last []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, len(b))]...)
		return len(b), nil
	}
	t.last = append(t.last, b...)
	if len(t.last) > t.max {
		t.last = append(t.last[:0], t.last[len(t.last)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.last)
}
