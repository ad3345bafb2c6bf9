// Command soak drives a real `mcpbridge serve --http` under sustained
// chaos and says whether it held: many go-sdk clients (protocol 2025-11-25
// sessions and 2026-07-28 clients) calling, listing, cancelling mid-call
// and disconnecting abruptly; the config file rewritten every few seconds,
// so serve hot-reloads; and backend processes killed with SIGKILL. After
// the load it idles, reads serve's heap from its --metrics-addr listener,
// stops serve with SIGTERM and checks /proc for processes serve started
// that survived it.
//
// Usage, from the module root:
//
//	go run ./bench/soak                        # 10 minutes of load, then 2m30s idle
//	go run ./bench/soak -duration 30s -idle 5s # a quick look
//	go run ./bench/soak -long-sessions         # one session per client for the whole run
//
// It exits 1 on a hang (an operation that took -hang-bound or more), an
// orphan, serve not exiting 0 within -grace of SIGTERM, or serve's heap
// after idle above its start by more than -heap-tolerance and -heap-slack;
// 2 on bad flags or when the soak cannot start. docs/operations.md §9
// describes the run and what it measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/mcpbridge/mcpbridge/internal/cli"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// selfEnv makes this program run as mcpbridge itself (cli.Main), for
// -mcpbridge self: the test runs the soak without building the command.
const selfEnv = "SOAK_AS_MCPBRIDGE"

func main() {
	runIfChild()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runIfChild turns the process into a fixture backend or into mcpbridge
// when the environment says so, and exits; otherwise it returns.
func runIfChild() {
	mcppeer.RunIfChild()
	if os.Getenv(selfEnv) != "1" {
		return
	}
	if err := serveHeapProfiles(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, cli.IO{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())), StdinIsTerminal: term.IsTerminal(int(os.Stdin.Fd()))})
	stop()
	os.Exit(code)
}

// options are the soak's parsed flags.
type options struct {
	duration, idle, hangBound, grace time.Duration
	reloadEvery, killEvery, slow     time.Duration
	clients, backends                int
	mcpbridge                        string
	heapTolerance                    float64
	heapSlack                        int64
	quiet                            bool
	// longSessions holds each client to one session (see long.go), calling
	// rate times a second in all.
	longSessions bool
	rate         float64
	// profileDir, when set, receives heap profiles of serve (see
	// profile.go).
	profileDir string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the load and the chaos run")
	fs.DurationVar(&o.idle, "idle", 150*time.Second, "how long serve idles after the load before its heap is read (over 2 minutes includes a forced GC)")
	fs.DurationVar(&o.hangBound, "hang-bound", 30*time.Second, "an operation taking this long is a hang")
	fs.DurationVar(&o.grace, "grace", 15*time.Second, "how long serve may take to exit after SIGTERM")
	fs.DurationVar(&o.reloadEvery, "reload-every", 3*time.Second, "how often the config file is rewritten")
	fs.DurationVar(&o.killEvery, "kill-every", 5*time.Second, "how often a backend process is killed with SIGKILL")
	fs.DurationVar(&o.slow, "slow", 10*time.Second, "how long the slow calls that clients cancel would run")
	fs.IntVar(&o.clients, "clients", 16, "concurrent clients")
	fs.IntVar(&o.backends, "backends", 4, "stdio backends in the config (some come and go with reloads)")
	fs.StringVar(&o.mcpbridge, "mcpbridge", "", `the mcpbridge program to serve with; "" builds ./cmd/mcpbridge, "self" runs this program as mcpbridge`)
	fs.Float64Var(&o.heapTolerance, "heap-tolerance", 0.25, "allowed growth of serve's heap after idle, as a fraction of its start")
	heapSlackMiB := fs.Int64("heap-slack", 4, "allowed growth of serve's heap after idle, in MiB, on top of -heap-tolerance")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	fs.BoolVar(&o.longSessions, "long-sessions", false, "each client keeps one 2025-11-25 session (declaring roots) for the whole run, calling at -rate; "+
		"reloads every 5s and kills every 7s unless -reload-every or -kill-every say otherwise; the sessions stay open through the idle")
	fs.Float64Var(&o.rate, "rate", 400, "with -long-sessions: calls per second, all clients together")
	fs.StringVar(&o.profileDir, "heap-profiles", "", "a directory to write serve's heap profiles to (start, end of load, after idle); needs -mcpbridge self")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.longSessions {
		set := make(map[string]bool)
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["reload-every"] {
			o.reloadEvery = longReloadEvery
		}
		if !set["kill-every"] {
			o.killEvery = longKillEvery
		}
	}
	o.heapSlack = *heapSlackMiB << 20
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("soak: unexpected arguments %q", fs.Args())
	case o.duration <= 0 || o.idle < 0 || o.hangBound <= 0 || o.grace <= 0 || o.reloadEvery <= 0 || o.killEvery <= 0 || o.slow < time.Second:
		return o, errors.New("soak: -duration, -hang-bound, -grace, -reload-every and -kill-every must be positive, -slow at least 1s, -idle not negative")
	case o.clients < 1 || o.backends < 1:
		return o, errors.New("soak: -clients and -backends must be at least 1")
	case o.heapTolerance < 0 || o.heapSlack < 0:
		return o, errors.New("soak: -heap-tolerance and -heap-slack must not be negative")
	case o.rate <= 0:
		return o, errors.New("soak: -rate must be positive (calls per second, all clients together)")
	case o.profileDir != "" && o.mcpbridge != "self":
		return o, errors.New("soak: -heap-profiles needs -mcpbridge self (only the soak's own serve can write them)")
	}
	return o, nil
}

// run is main up to the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	logf := func(format string, a ...any) {
		if !o.quiet {
			fmt.Fprintf(stderr, "soak: "+format+"\n", a...)
		}
	}
	res, err := soak(ctx, o, logf)
	if err != nil {
		fmt.Fprintf(stderr, "soak: %v\n", err)
		return 2
	}
	res.print(stdout)
	if faults := res.faults(o); len(faults) > 0 {
		for _, f := range faults {
			fmt.Fprintf(stderr, "soak: FAIL: %s\n", f)
		}
		if res.serveTail != "" {
			fmt.Fprintf(stderr, "soak: the end of serve's stderr:\n%s\n", res.serveTail)
		}
		return 1
	}
	return 0
}
