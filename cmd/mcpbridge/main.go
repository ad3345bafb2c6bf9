// Command mcpbridge connects to MCP servers and shows, calls and serves
// their tools under stable, model-safe names. Run 'mcpbridge help'.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/mcpbridge/mcpbridge/internal/cli"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

func main() {
	// A sandboxed server's start passes through here; nothing else may
	// run before it confines itself.
	sandbox.RunIfExec()
	// A client that stops reading serve --stdio's output fails the write
	// (EPIPE): unless SIGPIPE is notified, Go ends the program on a broken
	// stdout, before any shutdown. Notified, not ignored, which the stdio
	// servers it starts would inherit.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), cli.StopSignals()...)
	code := cli.Main(ctx, cli.IO{
		Args:             os.Args[1:],
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		StdinIsTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
	})
	stop()
	os.Exit(code)
}
