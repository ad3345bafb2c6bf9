package codemode

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// Why a program failed, for callers that branch: an *Error wraps one of
// these, or for a program whose caller cancelled it, the context's cause.
var (
	// ErrSyntax: the program does not parse.
	ErrSyntax = errors.New("syntax error")
	// ErrThrown: the program threw (or its promise was rejected) and did
	// not catch it.
	ErrThrown = errors.New("uncaught exception")
	// ErrTimeLimit: the program ran past Options.Timeout.
	ErrTimeLimit = errors.New("the program ran past its time limit")
	// ErrCallLimit: the program made more tool calls than Options.MaxCalls.
	ErrCallLimit = errors.New("the program made too many tool calls")
	// ErrOutputLimit: the program's return value is over Options.MaxOutput.
	ErrOutputLimit = errors.New("the program's output is too large")
	// ErrMemoryLimit: the heap grew past Options.MaxMemory while the
	// program ran, or the program asked for a string or array longer than
	// its share of it.
	ErrMemoryLimit = errors.New("the program used too much memory")
	// ErrResult: the return value cannot be sent as JSON (a cyclic object,
	// a BigInt).
	ErrResult = errors.New("the return value is not JSON")
	// ErrBusy: the program found no place to run (other programs took
	// every one) before its time limit passed.
	ErrBusy = errors.New("the program could not start: the code-mode slots were all busy")
	// ErrStalled: the program awaits a promise that nothing can settle.
	ErrStalled = errors.New("the program waits forever")
)

// timeLimit is ErrTimeLimit with the limit the caller set (not what was
// left of it when something checked), and more: how to stay within it.
func timeLimit(limit time.Duration, more string) error {
	return fmt.Errorf("%w of %s%s", ErrTimeLimit, limit, more)
}

// Error is why a program failed: Err is one of the sentinels above (or
// the cancelled context's cause), Message says what happened and how to
// fix it, and Line and Column (1-based) point into the program when the
// failure has a place there (0 otherwise).
type Error struct {
	Err          error
	Message      string
	Line, Column int
}

// Error returns "line L, column C: message", or the message alone.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// srcName names the program in stack traces, to find its frames.
const srcName = "program.js"

// prefix wraps the program so that it may await and return; it is on the
// program's first line, so only that line's columns shift.
const (
	prefix = "(async () => {"
	suffix = "\n})()"
)

// at returns the program's position for a position in the wrapped
// source.
func at(line, col int) (int, int) {
	if line == 1 {
		col -= len(prefix)
	}
	return line, max(col, 1)
}

// syntaxHint follows every syntax error: a model that read a TypeScript
// declaration tends to write TypeScript.
const syntaxHint = " (the program is plain JavaScript: no type annotations, no import or export)"

// compile parses and compiles the program, reporting a syntax error with
// its place.
func compile(program string) (*goja.Program, error) {
	ast, err := parser.ParseFile(nil, srcName, prefix+program+suffix, 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return nil, syntaxError(program, list[0].Message, list[0].Position.Line, list[0].Position.Column)
		}
		return nil, &Error{Err: ErrSyntax, Message: "syntax error: " + err.Error()}
	}
	prg, err := goja.CompileAST(ast, false)
	if err != nil {
		if ce, ok := errors.AsType[*goja.CompilerSyntaxError](err); ok && ce.File != nil {
			p := ce.File.Position(ce.Offset)
			return nil, syntaxError(program, ce.Message, p.Line, p.Column)
		}
		return nil, &Error{Err: ErrSyntax, Message: "syntax error: " + err.Error()}
	}
	return prg, nil
}

// syntaxError is the error of a syntax error at line and col of the
// wrapped program. One past the program's last line is in the wrapper's
// closing brace: the program ended inside something it opened, which is
// reported at its own end rather than at a brace it never wrote.
func syntaxError(program, msg string, line, col int) *Error {
	lines := strings.Split(program, "\n")
	if line > len(lines) {
		last := lines[len(lines)-1]
		col = len(last) + 1
		if len(lines) == 1 {
			col += len(prefix) // at takes it off again
		}
		line, col = at(len(lines), col)
		return &Error{Err: ErrSyntax, Line: line, Column: col,
			Message: "syntax error: the program ended early (an unclosed bracket, brace, parenthesis, string or comment, or an unfinished expression)" + syntaxHint}
	}
	line, col = at(line, col)
	return &Error{Err: ErrSyntax, Line: line, Column: col, Message: "syntax error: " + msg + syntaxHint}
}

// stackPos finds the program's first frame in a JavaScript stack trace.
var stackPos = regexp.MustCompile(regexp.QuoteMeta(srcName) + `:(\d+):(\d+)`)

// maxThrownText bounds the text of a thrown value in an error: it goes
// back to the caller as the error's message, beside the output bound.
const maxThrownText = 4 << 10

// thrown returns the error of a value the program threw and did not
// catch: its text, at the place its stack names. Reading the value may
// run the program's code (a toString, a getter of stack), which may throw
// in turn: what could not be read is left out, and the process goes on
// to report the failure with its logs.
func thrown(v goja.Value) (e *Error) {
	e = &Error{Err: ErrThrown, Message: "uncaught value that cannot be shown as text"}
	defer func() {
		_ = recover() // a goja exception out of the program's code: e says what was read
	}()
	e.Message = "uncaught " + textcut.Marked(v.String(), maxThrownText, "… (cut)")
	obj, ok := v.(*goja.Object)
	if !ok {
		return e
	}
	if goErr, ok := exportError(obj); ok && errors.Is(goErr, ErrMemoryLimit) {
		e.Err, e.Message = ErrMemoryLimit, goErr.Error()
	}
	if stack := obj.Get("stack"); stack != nil {
		if m := stackPos.FindStringSubmatch(stack.String()); m != nil {
			l, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			e.Line, e.Column = at(l, c)
		}
	}
	return e
}

// exceptionPos returns the program's position in an uncatchable error's
// stack (a stack overflow), 0, 0 if none.
func exceptionPos(frames []goja.StackFrame) (int, int) {
	for _, f := range frames {
		if f.SrcName() == srcName {
			p := f.Position()
			return at(p.Line, p.Column)
		}
	}
	return 0, 0
}

// exportError returns the Go error a GoError object carries (one a
// sandbox guard threw).
func exportError(obj *goja.Object) (error, bool) {
	v := obj.Get("value")
	if v == nil {
		return nil, false
	}
	err, ok := v.Export().(error)
	return err, ok
}
