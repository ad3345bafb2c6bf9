package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Each program runs in a process of its own: the program that links this
// package, run again (childArg). goja stops JavaScript at its next
// instruction when interrupted, but not a builtin running in Go, which
// the length guards (sandbox.go) can only partly foresee: JSON.stringify
// of one object shared forty levels deep writes 2^40 elements, a join of
// a thousand 4 Mi-character strings builds 4 GB, an iterator the engine
// keeps for arguments objects walks four billion holes. In the caller's
// process one such call exhausted its memory (and a gateway's every
// session with it) or held a goroutine for ever. In its own, its address
// space is capped (limitMemory) and it is killed once stuck past its time
// limit: the caller learns why and goes on, and no program shares memory
// with another caller's.

// killGrace is how long past its time limit, or its caller's cancel, a
// program's process may run with no call of its in flight before it is
// killed: it ends by itself at once then, unless a builtin holds it.
const killGrace = 2 * time.Second

// runIsolated runs program in a process of its own; view's calls are made
// here, in ctx, as the process asks for them.
func runIsolated(ctx context.Context, view View, api *API, program string, opts Options) (Result, error) {
	// The wait for a place is part of the program's time: no call waits
	// past its limit however many programs others run.
	deadline := time.Now().Add(opts.Timeout)
	release, err := processSlots.acquire(ctx, holderOf(ctx, view), deadline)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if ctx.Err() != nil { // both may be ready: a cancelled program starts no process
		return Result{}, &Error{Err: causeOf(ctx), Message: "the program was cancelled while it waited to start: " + causeOf(ctx).Error()}
	}
	p, err := startProcess(view, api, opts, deadline)
	if err != nil {
		return Result{}, err
	}
	wopts := wireOptionsOf(opts)
	wopts.Deadline = p.deadline
	p.wg.Go(func() { p.send(childRequest{Program: program, Tools: wireToolsOf(api), Options: wopts}) })
	return p.serve(ctx)
}

// processSlots bounds the programs' processes running at once in this
// process (slots): a client's concurrent run_code calls (as many as the
// gateway's call slots) would otherwise start one each.
var processSlots = newSlots(max(4, 2*runtime.GOMAXPROCS(0)))

// process is one program's process, seen from Run.
type process struct {
	cmd      *exec.Cmd
	in       *os.File // the process's fd 3
	out      *bufio.Reader
	words    *tail // its stdout and stderr
	view     View
	api      *API
	opts     Options
	sem      chan struct{} // calls in flight, as the runner bounds them
	deadline time.Time     // the program's time limit

	wmu sync.Mutex // one line at a time on in

	mu       sync.Mutex
	calls    int                                // asked for so far; guarded by mu
	cancel   map[uint64]context.CancelCauseFunc // of the calls in flight; guarded by mu
	wg       sync.WaitGroup                     // the calls' goroutines and the writes
	lastCall atomic.Int64                       // when a call last returned, unix nanoseconds
	tooLong  atomic.Bool                        // it wrote a line over maxLine, and was killed for it
}

func startProcess(view View, api *API, opts Options, deadline time.Time) (*process, error) {
	self, err := selfExe()
	if err != nil {
		return nil, fmt.Errorf("code mode: finding this program, to run the code in: %w", err) // untested: /proc/self/exe on Linux
	}
	cmd := exec.Command(self, childArg)
	cmd.Env = childEnv()
	p := &process{cmd: cmd, words: &tail{max: 4 << 10}, view: view, api: api, opts: opts,
		sem: make(chan struct{}, opts.MaxConcurrent), deadline: deadline,
		cancel: map[uint64]context.CancelCauseFunc{}}
	cmd.Stdout, cmd.Stderr = p.words, p.words
	// The wire is on fds 3 and 4, not on stdin and stdout, where anything
	// that runs before the runner (another package's init) might write.
	childIn, in, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("code mode: a pipe for the program's process: %w", err) // untested: out of file descriptors
	}
	out, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		in.Close()
		return nil, fmt.Errorf("code mode: a pipe for the program's process: %w", err) // untested: out of file descriptors
	}
	cmd.ExtraFiles = []*os.File{childIn, childOut}
	err = cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		in.Close()
		out.Close()
		return nil, fmt.Errorf("code mode: starting the program's process: %w", err) // untested: exec of this program fails only without it
	}
	p.in, p.out = in, bufio.NewReaderSize(out, 64<<10)
	return p, nil
}

// childEnv is the environment of a program's process: none of the
// caller's (its secrets have no business there, nor its GOGC or
// GOMEMLIMIT), but how a race-enabled or coverage build runs. Never nil:
// exec gives a nil environment the caller's whole one.
func childEnv() []string {
	env := []string{}
	for _, key := range []string{"GORACE", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(key); ok {
			env = append(env, key+"="+v)
		}
	}
	return env
}

// serve answers the process until the program ends, and returns its
// result; it returns once the process has exited and every call it asked
// for has returned. Nothing here waits on a write to the process: its
// kills must not wait on a process that does not read.
func (p *process) serve(ctx context.Context) (Result, error) {
	msgs := make(chan childMessage)
	go p.read(msgs)
	check := time.NewTimer(time.Until(p.deadline) + killGrace)
	defer check.Stop()
	cancelled := ctx.Done()
	var done *wireDone
	var over error // why the process must end: the time limit, a cancel
	for done == nil {
		select {
		case m, ok := <-msgs:
			switch {
			case !ok:
				return p.end(ctx, nil, nil, over)
			case m.Call != nil:
				p.call(ctx, *m.Call)
			case m.Cancel != nil:
				p.cancelCall(m.Cancel.ID, m.Cancel.cause())
			case m.Done != nil:
				done = m.Done
			}
		case <-cancelled:
			cancelled = nil
			over = &Error{Err: causeOf(ctx), Message: "the program was cancelled and did not stop: its process was killed"}
			p.wg.Go(func() { p.send(parentMessage{Stop: causeOf(ctx).Error()}) }) // the child says "the program was cancelled: "
			check.Reset(killGrace)
		case <-check.C:
			if over == nil {
				over = &Error{Err: ErrTimeLimit, Message: timeLimit(p.opts.Timeout,
					" and did not stop (a builtin ran on past it): its process was killed; do less per program").Error()}
			}
			if wait := p.settling(); wait > 0 {
				check.Reset(wait) // its calls are ending, and it with them
				continue
			}
			p.cmd.Process.Kill()
		}
	}
	return p.end(ctx, msgs, done, nil)
}

// settling is how long to wait more for a process that should be ending:
// while a call of its is in flight, or returned less than killGrace ago,
// it is waiting for its calls, not stuck.
func (p *process) settling() time.Duration {
	p.mu.Lock()
	inFlight := len(p.cancel)
	p.mu.Unlock()
	if inFlight > 0 {
		return killGrace
	}
	return killGrace - time.Since(time.Unix(0, p.lastCall.Load()))
}

// end lets the process go (its fd 3 closed, killed if it does not exit
// within killGrace), drains msgs when the reader still runs, ends the
// calls in flight, and waits for all of it. It returns what done says,
// or, without it, why the process ended (over: why it was killed).
func (p *process) end(ctx context.Context, msgs <-chan childMessage, done *wireDone, over error) (Result, error) {
	p.in.Close() // a write still blocked fails now
	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
		case <-time.After(killGrace):
			p.cmd.Process.Kill()
		}
	}()
	if msgs != nil {
		for range msgs { // until the process closes its fd 4
		}
	}
	p.cmd.Wait()
	close(exited)
	p.mu.Lock()
	for _, cancel := range p.cancel {
		cancel(errors.New("the program ended"))
	}
	p.mu.Unlock()
	p.wg.Wait()
	if done != nil {
		return done.Result, done.Error.err(ctx)
	}
	return Result{}, p.crashed(ctx, over)
}

// read decodes the process's lines into msgs, and closes msgs when its
// fd 4 ends, or carries what is not a message (it is then killed).
func (p *process) read(msgs chan<- childMessage) {
	defer close(msgs)
	for {
		line, err := readLine(p.out)
		if len(line) > 0 && (err == nil || errors.Is(err, io.EOF)) {
			var m childMessage
			if json.Unmarshal(line, &m) != nil {
				p.cmd.Process.Kill()
				io.Copy(io.Discard, p.out) // untested: the runner writes only messages
				return
			}
			msgs <- m
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.tooLong.Store(true) // a line over maxLine
				p.cmd.Process.Kill()
				io.Copy(io.Discard, p.out)
			}
			return
		}
	}
}

// call makes the call the process asked for, through the view, in ctx
// (bounded in time, as the call's context was when programs ran in the
// caller's process), and answers it.
func (p *process) call(ctx context.Context, c wireCall) {
	cctx, cancel := context.WithCancelCause(ctx)
	p.mu.Lock()
	p.calls++
	over := p.calls > p.opts.MaxCalls
	p.cancel[c.ID] = cancel
	p.mu.Unlock()
	p.wg.Go(func() {
		defer p.lastCall.Store(time.Now().UnixNano())
		defer p.cancelCall(c.ID, nil)
		reply := wireReply{ID: c.ID}
		switch {
		case over:
			reply.Error = fmt.Sprintf("code mode: more than %d calls", p.opts.MaxCalls) // untested: the runner stops its program first
		case p.api.lookup(c.Name) == nil && !p.opts.CallUnlisted:
			reply.Error = fmt.Sprintf("unknown tool %q", c.Name) // untested: the runner refuses it first
		default:
			// The program's own clock, which started after this one, ends
			// the call first (a cancel with its cause); this is the bound
			// should the process not.
			tctx, stop := context.WithDeadlineCause(cctx, p.deadline.Add(killGrace), timeLimit(p.opts.Timeout, ""))
			res, err := p.callView(tctx, c)
			stop()
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
	if ctx.Err() != nil {
		// Both were ready and the select took the place: a call the
		// program gave up is not made (its Gate would audit it).
		return tool.Result{}, context.Cause(ctx)
	}
	res, err := p.view.Call(ctx, c.Name, c.Args)
	if err == nil && p.opts.Attachments != nil {
		res = keepAttachments(ctx, p.opts.Attachments, res)
	}
	return res, err
}

// cancelCall ends the call id, if still in flight, with cause.
func (p *process) cancelCall(id uint64, cause error) {
	p.mu.Lock()
	cancel := p.cancel[id]
	delete(p.cancel, id)
	p.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// send writes m to the process as one line (a reply over maxLine as the
// error it is); a failed write means it is gone, which the reader sees.
func (p *process) send(m any) {
	b := marshalLine(m)
	if pm, ok := m.(parentMessage); ok && len(b) > maxLine && pm.Reply != nil {
		b = marshalLine(parentMessage{Reply: &wireReply{ID: pm.Reply.ID,
			Error: fmt.Sprintf("the tool's result is over %d MiB, more than a program may take", maxLine>>20)}})
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.in.Write(b)
}

// marshalLine is v as one JSON line, with <, > and & as they are (a
// program's value reaches a model as written).
func marshalLine(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil // untested: the messages are JSON
	}
	return b.Bytes()
}

// crashed is why a process ended without a result: killed (over: the time
// limit, a cancel that was not heeded), out of memory, or something else,
// which its first words on stderr say.
func (p *process) crashed(ctx context.Context, over error) error {
	words := p.words.String()
	switch {
	case p.tooLong.Load():
		return &Error{Err: ErrMemoryLimit, Message: fmt.Sprintf("%v: a tool call's arguments are over %d MiB: pass less to one call", ErrMemoryLimit, maxLine>>20)}
	case strings.Contains(words, "goroutine stack exceeds"):
		return &Error{Err: ErrMemoryLimit, Message: fmt.Sprintf("%v: its process ran out of stack (%d MiB): the program, or a value it built, is nested too deeply: nest less", ErrMemoryLimit, maxGoStack>>20)}
	case outOfMemory(words):
		return &Error{Err: ErrMemoryLimit, Message: fmt.Sprintf("%v: its process ran out of the memory it may map (the program's heap may grow by %d MiB) and was stopped: keep less in memory, and build no huge string or array at once",
			ErrMemoryLimit, p.opts.MaxMemory>>20)}
	case over != nil:
		return over
	case ctx.Err() != nil:
		return &Error{Err: causeOf(ctx), Message: "the program was cancelled: " + causeOf(ctx).Error()}
	}
	return &Error{Err: ErrThrown, Message: fmt.Sprintf("code mode: the program's process ended (%v): %s", p.cmd.ProcessState, firstLines(words, 3))}
}

// outOfMemory reports whether a Go process's last words say it could not
// get memory: the heap, a thread's stack, or in a race-enabled build the
// detector's shadow or the heap's place beside it.
func outOfMemory(words string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to allocate", "pthread_create failed", "stack overflow", "goroutine stack exceeds",
		"address space collisions"} {
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
	n := len(b)
	if room := t.max - len(t.head); room > 0 {
		t.head = append(t.head, b[:min(room, n)]...)
		b = b[min(room, n):]
	}
	t.last = append(t.last, b...)
	if len(t.last) > t.max {
		t.last = append(t.last[:0], t.last[len(t.last)-t.max:]...)
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.last)
}
