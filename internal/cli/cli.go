package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/demo"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
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
}

// env is one run's context.
type env struct {
	IO
	// elicitMode is --elicit: how a one-shot command answers a server's
	// elicitation without a person.
	elicitMode string
	// term is the person at the terminal, when one answers elicitation.
	term terminal
	// sampler answers sampling with the config's sampling entry; sampling
	// is offered when the command's config has one.
	sampler  *sampling.Provider
	sampling bool
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

const usage = `mcpbridge connects to MCP servers and shows their tools as a model sees them.

Usage:
  mcpbridge tools  [SOURCE] [--json] [--timings]   list the tools under their public names
  mcpbridge call   [SOURCE] [--json] NAME [ARGS_JSON | -]
                                                   call a tool by its public name
  mcpbridge search [SOURCE] [--json] [--limit K] QUERY | -
                                                   the tools that fit a request, best first (default 5;
                                                   "-": one query per line of stdin, one line of names each)
  mcpbridge resources [SOURCE] [--json]            list the servers' resources and resource templates
  mcpbridge read   [SOURCE] [--json] [--server NAME] URI
                                                   print a resource (a templated URI finds its server)
  mcpbridge prompts [SOURCE] [--json]              list the prompts under their public names
  mcpbridge prompt [SOURCE] [--json] NAME [ARGS_JSON]
                                                   render a prompt's messages ("role: text")
  mcpbridge status [SOURCE] [--json] [--timings]   start the servers and show each one's state
  mcpbridge validate [--config FILE]               check a config file without starting anything
  mcpbridge serve  [SOURCE] (--stdio | --http [ADDR]) [--raw-names] [--ready-timeout D]
                                                   serve every tool as one MCP server, hot-reloading the config
  mcpbridge demo-server                            run the built-in demo MCP server on stdio

SOURCE (default: $MCPBRIDGE_CONFIG, ./mcpbridge.yaml, or the embedded demo config):
  --config FILE                   a YAML file of server entries
  --url URL [--name NAME] [--header 'K: V']...
                                  one Streamable HTTP server (serverName from --name, default "remote")

Flags:
  --json      machine-readable output
  --elicit decline|cancel|defaults
              how to answer a server that asks for input during a command (default decline;
              defaults accepts with each field's default)
  -v          show servers' log lines (stderr)

serve:
  --raw-names                     serve each tool under its server's own name (the first server in the
                                  config keeps a name two servers offer; the log says which was left out)
  --ready-timeout D               hold requests other than initialize until the servers have started,
                                  at most D (e.g. 30s; default: the largest startupTimeoutMs; 0: do not wait)

serve --http (default ADDR 127.0.0.1:7410; MCP at /mcp, health at /healthz):
  --token-env NAME                require "Authorization: Bearer $NAME" on every request
  --allow-origin ORIGIN           a browser origin allowed besides loopback ones (repeatable)
  --insecure-no-auth-on-network   allow a non-loopback ADDR without a token

Exit status: 0 success, 1 a failed call or server, 2 a usage or config error.
`

// Main runs mcpbridge with the given IO and returns the exit status.
func Main(ctx context.Context, io IO) int {
	if io.LookupEnv == nil {
		io.LookupEnv = os.LookupEnv
	}
	e := &env{IO: io}
	if len(io.Args) == 0 {
		fmt.Fprint(io.Stderr, usage)
		return ExitUsage
	}
	cmd, rest := io.Args[0], io.Args[1:]
	var err error
	switch cmd {
	case "tools":
		err = e.tools(ctx, rest)
	case "call":
		err = e.call(ctx, rest)
	case "search":
		err = e.search(ctx, rest)
	case "resources":
		err = e.resources(ctx, rest)
	case "read":
		err = e.read(ctx, rest)
	case "prompts":
		err = e.prompts(ctx, rest)
	case "prompt":
		err = e.prompt(ctx, rest)
	case "status":
		err = e.status(ctx, rest)
	case "validate":
		err = e.validate(rest)
	case "serve":
		err = e.serve(ctx, rest)
	case "demo-server":
		err = demo.Run(ctx)
	case "help", "-h", "--help":
		fmt.Fprint(io.Stdout, usage)
		return ExitOK
	default:
		err = usagef("unknown command %q (see 'mcpbridge help')", cmd)
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
func (e *env) logger(verbose bool) *slog.Logger {
	if !verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
