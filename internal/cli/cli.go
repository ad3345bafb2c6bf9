package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"

	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// Exit statuses (docs/decisions.md §7).
const (
	ExitOK     = 0
	ExitFailed = 1 // a tool error or failed call
	ExitUsage  = 2 // usage or config error
)

// IO is the outside world of one run: arguments, streams and environment.
type IO struct {
	Args   []string // without the program name
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads the environment; nil means the process's.
	LookupEnv func(string) (string, bool)
	// Environ is the environment children inherit (scrubbed); nil means
	// os.Environ().
	Environ []string
	// StderrIsTerminal enables progress display.
	StderrIsTerminal bool
	// StdinIsTerminal, with StderrIsTerminal, lets a one-shot command ask
	// the person a server's elicitation (unless --elicit says otherwise).
	StdinIsTerminal bool
	// HTTPClient sends the model's requests (the agent's and sampling's);
	// nil: a client of their own.
	HTTPClient *http.Client
	// Prog is the name the binary was run as, for the completion scripts;
	// "" means the base name of os.Args[0].
	Prog string
}

// env is one run's context.
type env struct {
	IO
	tracer mcpclient.Tracer // nil unless OpenTelemetry is configured (tracing.go)
	// elicitMode is --elicit: how a one-shot command answers a server's
	// elicitation without a person.
	elicitMode string
	// term is the person at the terminal, when one answers elicitation.
	term terminal
	// sampler answers sampling with the config's sampling entry; sampling
	// is offered when the command's config has one.
	sampler  *sampling.Provider
	sampling bool
	// pins is the Book every server checks its definitions against
	// (pin.go); pinning (the pin command) loads no lock into it.
	pins    *pin.Book
	pinning bool
	// locks are the locks as the run read them at its start, by path: a
	// server a reload adds is checked against the lock of its file as it
	// was then (serve reads its locks once).
	locks map[string]*pin.Lock
	// scanAll is set by the scan command: every server's definitions are
	// scanned and none is withheld (mcpclient.Options.ScanAll).
	scanAll bool
	// quiet leaves out the notice that the embedded default is in use
	// (the completion scripts' helper).
	quiet bool
	// keeper applies the gateway entry (serve only; nil otherwise).
	keeper *gatewayauth.Keeper
	// credentials are the variables the config as last read names as
	// holding credentials: no child inherits them unless its own env
	// passes them (mcpclient.Options.Withheld).
	credentials atomic.Pointer[[]string]
}

// withheld is mcpclient.Options.Withheld: the config's credentials.
func (e *env) withheld() []string {
	if p := e.credentials.Load(); p != nil {
		return *p
	}
	return nil
}

func (e *env) getenv(k string) string {
	v, _ := e.lookup(k)
	return v
}

// lookup expands ${VAR} in configs. MCPBRIDGE_EXE defaults to this binary,
// which is how the embedded default config runs the demo server.
func (e *env) lookup(k string) (string, bool) {
	if v, ok := e.LookupEnv(k); ok {
		return v, true
	}
	if k == "MCPBRIDGE_EXE" {
		if exe, err := os.Executable(); err == nil {
			return exe, true
		}
	}
	return "", false
}

// Main runs mcpbridge with the given IO and returns the exit status.
func Main(ctx context.Context, io IO) int {
	if io.LookupEnv == nil {
		io.LookupEnv = os.LookupEnv
	}
	// Logs, progress and notices reach stderr from several goroutines:
	// one lock makes any writer safe for them, as a file is.
	io.Stderr = &lockedWriter{w: io.Stderr}
	e := &env{IO: io}
	defer e.startTracing(ctx)()
	args := hoist(io.Args)
	if len(args) == 0 {
		fmt.Fprint(io.Stderr, usageText())
		return ExitUsage
	}
	var err error
	switch name, rest := args[0], args[1:]; name {
	case "help", "-h", "--help":
		err = e.help(rest)
	case "--version":
		err = e.version(rest)
	case "__complete": // the completion scripts' helper, not listed
		err = e.completeNames(ctx, rest)
	default:
		cmd, ok := findCommand(name)
		switch {
		case !ok:
			err = unknownCommand(name)
		case wantsHelp(rest):
			fmt.Fprint(io.Stdout, cmd.helpText())
		default:
			if err = refuseRepeats(name, rest); err == nil {
				err = cmd.run(e, ctx, rest)
			}
		}
	}
	return e.exit(err)
}

// exitError carries a status without printing anything more (the command
// already reported).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (e *env) exit(err error) int {
	var ee *exitError
	var ce *configError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case isUsage(err):
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Text(err.Error()))
		return ExitUsage
	case errors.As(err, &ce) && (errors.As(err, new(*fs.PathError)) || errors.Is(err, fs.ErrNotExist)):
		// A file that cannot be read says so itself: it is not invalid.
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Text(err.Error()))
		return ExitUsage
	case errors.As(err, &ce):
		fmt.Fprintf(e.Stderr, "mcpbridge: invalid config:\n%s\n", termsafe.Text(err.Error()))
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(e.Stderr, "mcpbridge: interrupted")
		return ExitFailed
	default:
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", termsafe.Text(err.Error()))
		return ExitFailed
	}
}

// logger builds the log of one run: servers' lines only with -v, since a
// one-shot command reports failures itself.
func (e *env) logger(f *flags) *slog.Logger {
	if !f.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return e.newLogger(f, slog.LevelDebug)
}

// lockedWriter serializes the writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
