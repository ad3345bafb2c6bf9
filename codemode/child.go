package codemode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// childArg is the first argument of a program's process: the program that
// links this package (mcpbridge, a test binary, the bench) run again.
const childArg = "__codemode-run"

// A program's process is its runner from package initialisation on: it
// needs nothing of the packages that import this one, and so works in
// every program that links it, without a hook in each main.
func init() {
	if len(os.Args) == 2 && os.Args[1] == childArg {
		os.Exit(serveChild(os.NewFile(3, "program-in"), os.NewFile(4, "program-out")))
	}
}

// maxGoStack bounds a goroutine's stack in a program's process: the
// parser's recursion on a deeply nested program (about 4 KiB a level)
// ends there, a fatal error of that process alone, well before its
// address space cap. No program a person or a model writes nests this deep.
const maxGoStack = 64 << 20

// maxLine bounds one line of the wire, each way: a call's arguments or
// result, or the program's end. A variable for tests only.
var maxLine = 64 << 20

// serveChild runs the one program Run sends on in and answers on out; its
// status is 0 once the program ended (however it ended: that is in the
// last line), 1 when the request could not be read. Two threads run Go
// code: a program is one VM and its calls' goroutines, and each thread
// reserves address space the memory cap counts.
func serveChild(in io.Reader, out io.Writer) int {
	runtime.GOMAXPROCS(2)
	debug.SetMaxStack(maxGoStack)
	r := bufio.NewReaderSize(in, 64<<10)
	line, err := readLine(r)
	var req childRequest
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpbridge %s: reading the program: %v\n", childArg, err)
		return 1
	}
	limitMemory(req.Options.MaxMemory)
	ctx, stop := context.WithCancelCause(context.Background())
	v := &pipeView{tools: toolsOfWire(req.Tools), out: out, waiting: map[uint64]chan wireReply{}}
	go v.readReplies(r, stop)
	res, err := runHere(ctx, v, NewAPI(v.tools), req.Program, req.Options.options(), req.Options.end())
	v.send(childMessage{Done: &wireDone{Result: res, Error: wireErrorOf(err)}})
	return 0
}

// readLine reads one line of at most maxLine bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line over %d MiB", maxLine>>20)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// pipeView is the View of a program's process: its calls go to Run, which
// makes them through the caller's view.
type pipeView struct {
	tools []tool.Tool
	out   io.Writer

	wmu sync.Mutex // one line at a time on out

	mu      sync.Mutex
	next    uint64
	waiting map[uint64]chan wireReply // guarded by mu; nil once Run is gone
}

func (v *pipeView) Tools() ([]tool.Tool, error) { return v.tools, nil }

// Call asks Run for the call and waits for its answer. When the program
// no longer waits (ctx ends), Run is told, and the answer, which Run
// gives once its call returned, still awaited: Run returns only once
// every call it made has.
func (v *pipeView) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, context.Cause(ctx) // the program ended before the call had a slot: never made
	}
	v.mu.Lock()
	if v.waiting == nil {
		v.mu.Unlock()
		return tool.Result{}, errors.New("code mode: the program's caller is gone")
	}
	v.next++
	id, answer := v.next, make(chan wireReply, 1)
	v.waiting[id] = answer
	v.mu.Unlock()
	v.send(childMessage{Call: &wireCall{ID: id, Name: name, Args: args}})
	var reply wireReply
	select {
	case reply = <-answer:
	case <-ctx.Done():
		v.send(childMessage{Cancel: &wireCancel{ID: id, Cause: wireCauseOf(context.Cause(ctx))}})
		reply = <-answer
	}
	res := reply.Result
	res.Wire = reply.Wire
	if reply.Error != "" {
		return res, errors.New(reply.Error)
	}
	return res, nil
}

// send writes m as one line.
func (v *pipeView) send(m childMessage) {
	b := marshalLine(m)
	v.wmu.Lock()
	defer v.wmu.Unlock()
	v.out.Write(b) // a failed write: Run is gone, and the process with it
}

// readReplies hands each reply to its call, and stops the program when
// Run asks; when Run is gone (in ends), every call waiting is answered
// with that, and the program is stopped.
func (v *pipeView) readReplies(r *bufio.Reader, stop context.CancelCauseFunc) {
	for {
		line, err := readLine(r)
		var m parentMessage
		if err == nil {
			err = json.Unmarshal(line, &m)
		}
		switch {
		case err != nil:
			v.gone()
			stop(errors.New("its caller is gone"))
			return
		case m.Stop != "":
			stop(errors.New(m.Stop))
		case m.Reply != nil:
			v.mu.Lock()
			answer := v.waiting[m.Reply.ID]
			delete(v.waiting, m.Reply.ID)
			v.mu.Unlock()
			if answer != nil {
				answer <- *m.Reply
			}
		}
	}
}

// gone answers every waiting call: nobody else will.
func (v *pipeView) gone() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, answer := range v.waiting {
		answer <- wireReply{Error: "code mode: the program's caller is gone"}
	}
	v.waiting = nil
}
