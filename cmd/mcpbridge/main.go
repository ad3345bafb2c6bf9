// Command mcpbridge connects to MCP servers and shows, calls and serves
// their tools under stable, model-safe names. Run 'mcpbridge help'.
package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/term"

	"github.com/mcpbridge/mcpbridge/internal/cli"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

func main() {
	// A sandboxed server's start passes through here; nothing else may
	// run before it confines itself.
	sandbox.RunIfExec()
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
