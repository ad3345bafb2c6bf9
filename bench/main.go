package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(mainStatus()) } // untested: it exits; mainStatus is tested

// mainStatus is main up to the exit: a child kind runs and exits, anything
// else is the driver, stopped by SIGINT or SIGTERM.
func mainStatus() int {
	runIfChild()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// rowGroups are the values of -only, in run order.
func rowGroups() []string { return []string{"calls", "startup", "catalog", "memory"} }

// options are the parsed flags.
type options struct {
	smoke     bool
	out       string
	only      []string
	extraArgs []string // the flags given besides -smoke and -only, for the reproduce lines

	seqCalls, rounds, warmup, concCalls, concRounds, workers int

	servers       []int
	initDelay     time.Duration
	startupRounds int
	startupTools  int

	tools, pageSize, catalogRounds int

	memServers, memRounds int

	nodeBin        string
	skipNode       bool
	nodeSkipReason string

	profileDir string
	variants   []string // call variant keys to run; nil means all
	quiet      bool
}

// smokeDefaults are the flag values of -smoke, for the flags not given.
func smokeDefaults() map[string]string {
	return map[string]string{
		"calls": "40", "rounds": "2", "warmup": "5", "conc-calls": "32", "conc-rounds": "1", "workers": "8",
		"servers": "1,3", "init-delay": "20ms", "startup-rounds": "1",
		"tools": "250", "catalog-rounds": "1",
		"mem-servers": "2", "mem-rounds": "1",
	}
}

// parseOptions reads the flags. Every bad value is an error naming the flag.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.smoke, "smoke", false, "tiny counts, a few seconds: checks that every row still works (for CI); writes no file unless -out is given")
	fs.StringVar(&o.out, "out", "BENCHMARKS.md", "the report to write, relative to the module root; \"\" writes none")
	only := fs.String("only", strings.Join(rowGroups(), ","), "comma-separated row groups to run: "+strings.Join(rowGroups(), ", "))
	fs.IntVar(&o.seqCalls, "calls", 2000, "sequential echo calls per variant")
	fs.IntVar(&o.rounds, "rounds", 40, "interleaved rounds the sequential calls are split into")
	fs.IntVar(&o.warmup, "warmup", 200, "warm-up calls per variant, not measured")
	fs.IntVar(&o.concCalls, "conc-calls", 1000, "calls per concurrent round")
	fs.IntVar(&o.concRounds, "conc-rounds", 10, "concurrent rounds")
	fs.IntVar(&o.workers, "workers", 64, "concurrent callers")
	servers := fs.String("servers", "1,10,30", "server counts of the startup row, the first is the baseline")
	fs.DurationVar(&o.initDelay, "init-delay", 200*time.Millisecond, "how long each startup server takes to answer initialize")
	fs.IntVar(&o.startupRounds, "startup-rounds", 5, "startup rounds")
	fs.IntVar(&o.startupTools, "startup-tools", 5, "tools per startup server")
	fs.IntVar(&o.tools, "tools", 10000, "tools of the large catalog")
	fs.IntVar(&o.pageSize, "page", 100, "tools per tools/list page of the large catalog")
	fs.IntVar(&o.catalogRounds, "catalog-rounds", 5, "catalog rounds")
	fs.IntVar(&o.memServers, "mem-servers", 30, "idle servers of the memory row")
	fs.IntVar(&o.memRounds, "mem-rounds", 3, "memory rounds")
	fs.StringVar(&o.nodeBin, "node", "", "node executable (default: testdata/thirdparty's Node, else node on PATH)")
	fs.BoolVar(&o.skipNode, "skip-node", false, "leave out the Node TS SDK client instead of failing when it is not installed")
	fs.StringVar(&o.profileDir, "profile", "", "also write CPU and allocation profiles of the bridge's and the raw SDK's call paths and of catalog discovery to this directory")
	variants := fs.String("variants", "", "comma-separated call variant keys to run (default all): "+strings.Join(variantKeys(), ", "))
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (all options are flags)", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		switch f.Name {
		case "smoke", "only", "q", "profile", "out":
		case "skip-node":
			o.extraArgs = append(o.extraArgs, "-"+f.Name)
		default:
			o.extraArgs = append(o.extraArgs, "-"+f.Name+"="+f.Value.String())
		}
	})
	if o.smoke {
		for name, v := range smokeDefaults() {
			if !set[name] {
				if err := fs.Set(name, v); err != nil {
					return o, fmt.Errorf("-smoke default -%s=%s: %w", name, v, err) // untested: only if smokeDefaults is wrong
				}
			}
		}
		if !set["out"] {
			o.out = ""
		}
	}

	for _, g := range strings.Split(*only, ",") {
		g = strings.TrimSpace(g)
		if !slices.Contains(rowGroups(), g) {
			return o, fmt.Errorf("-only: %q is not a row group (want some of %s)", g, strings.Join(rowGroups(), ", "))
		}
		o.only = append(o.only, g)
	}
	if *variants != "" {
		for _, k := range strings.Split(*variants, ",") {
			k = strings.TrimSpace(k)
			if !slices.Contains(variantKeys(), k) {
				return o, fmt.Errorf("-variants: %q is not a call variant (want some of %s)", k, strings.Join(variantKeys(), ", "))
			}
			o.variants = append(o.variants, k)
		}
	}
	for _, s := range strings.Split(*servers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-servers: %q is not a positive server count", s)
		}
		o.servers = append(o.servers, n)
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"calls", o.seqCalls}, {"rounds", o.rounds}, {"conc-calls", o.concCalls}, {"conc-rounds", o.concRounds},
		{"workers", o.workers}, {"startup-rounds", o.startupRounds}, {"startup-tools", o.startupTools},
		{"tools", o.tools}, {"page", o.pageSize}, {"catalog-rounds", o.catalogRounds},
		{"mem-servers", o.memServers}, {"mem-rounds", o.memRounds},
	} {
		if c.v < 1 {
			return o, fmt.Errorf("-%s must be at least 1, got %d", c.name, c.v)
		}
	}
	if o.warmup < 0 || o.initDelay < 0 {
		return o, errors.New("-warmup and -init-delay must not be negative")
	}
	if o.rounds > o.seqCalls {
		return o, fmt.Errorf("-rounds (%d) must not exceed -calls (%d)", o.rounds, o.seqCalls)
	}
	return o, nil
}

func (o options) runs(group string) bool { return slices.Contains(o.only, group) }

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	if err := bench(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	return 0
}

// bench runs the selected rows, prints the tables and writes the report.
func bench(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	began := time.Now()
	logf := func(format string, args ...any) {
		if !o.quiet {
			fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable, which the servers re-execute: %w", err) // untested: needs a broken /proc
	}
	dir, err := os.MkdirTemp("", "mcpbridge-bench-")
	if err != nil {
		return fmt.Errorf("creating a scratch directory: %w", err) // untested: needs an unwritable TMPDIR
	}
	defer os.RemoveAll(dir)

	m := describeMachine(root)
	var node *nodeSetup
	if o.runs("calls") {
		n, err := findNode(root, o.nodeBin)
		switch {
		case err == nil:
			node = &n
			m.nodeVersion = n.version()
		case o.skipNode:
			o.nodeSkipReason = "skipped (-skip-node): " + err.Error()
		default:
			return fmt.Errorf("%w (or pass -skip-node)", err)
		}
	}

	defs := catalogDefs(o.tools)
	catalogPath, err := writeScript(dir, "catalog", catalogScript(defs, o.pageSize))
	if err != nil {
		return err // untested: the directory was just created (writeScript's errors are tested)
	}
	responder, err := buildResponder(root, dir)
	if err != nil {
		return err // untested here: buildResponder's failure is tested on its own
	}

	var (
		tables  []table
		calls   *callResults
		startup *startupResults
		catalog *catalogResults
	)
	// One entry per row group, in run order; each returns its tables.
	rows := []struct {
		group string
		run   func() ([]table, error)
	}{
		{"calls", func() (_ []table, err error) {
			var serve serveSetup // built only when a serve variant runs
			if o.variants == nil || slices.ContainsFunc(o.variants, func(k string) bool { return strings.HasPrefix(k, "serve-") }) {
				serve, err = newServeSetup(root, dir, responderChild(responder, 0, 1))
			}
			if err == nil {
				calls, err = runCalls(ctx, o, exe, responder, &serve, node, logf)
			}
			return tablesOr(err, func() []table { return append(callTables(o, calls), gatewayTable(o, calls)) })
		}},
		{"startup", func() (_ []table, err error) {
			startup, err = runStartup(ctx, o, responder, logf)
			return tablesOr(err, func() []table { return []table{startupTable(o, startup)} })
		}},
		{"catalog", func() (_ []table, err error) {
			catalog, err = runCatalog(ctx, o, exe, catalogPath, defs, logf)
			return tablesOr(err, func() []table { return []table{catalogTable(o, catalog)} })
		}},
		{"memory", func() ([]table, error) {
			mem, err := runMemory(ctx, o, exe, logf)
			return tablesOr(err, func() []table { return []table{memoryTable(o, mem)} })
		}},
		{"profile", func() ([]table, error) { return nil, profile(ctx, o, exe, responder, catalogPath, logf) }},
	}
	for _, row := range rows {
		if row.group == "profile" && o.profileDir == "" || row.group != "profile" && !o.runs(row.group) {
			continue
		}
		ts, err := row.run()
		if err != nil {
			return fmt.Errorf("%s: %w", row.group, err)
		}
		tables = append(tables, ts...)
	}
	tables = append([]table{targetsTable(o, calls, startup, catalog)}, tables...)

	m.duration = time.Since(began)
	m.loadAfter = loadAverage()
	for _, t := range tables {
		t.print(stdout)
	}
	if o.out != "" {
		path := o.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path) // untested: tests must not write into the module
		}
		if err := writeMarkdown(path, o, m, tables); err != nil {
			return err
		}
		logf("wrote %s", path)
	}
	return nil
}

// tablesOr returns build's tables, or err when the row failed.
func tablesOr(err error, build func() []table) ([]table, error) {
	if err != nil {
		return nil, err
	}
	return build(), nil
}

// moduleRoot walks up from the working directory to the mcpbridge module.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the working directory: %w", err) // untested: needs a deleted working directory
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/mcpbridge/mcpbridge\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run the benchmarks from inside the mcpbridge module (no go.mod of github.com/mcpbridge/mcpbridge above %s)", wd)
		}
	}
}

// describeMachine collects the report header.
func describeMachine(root string) machine {
	m := machine{
		date:        time.Now().UTC().Format("2006-01-02 15:04 MST"),
		cpu:         readFirstLine("/proc/cpuinfo", "model name"),
		kernel:      strings.TrimSpace(readFirstLine("/proc/sys/kernel/osrelease", "")),
		goVersion:   runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		nodeVersion: "not used",
		cpus:        runtime.NumCPU(),
		maxprocs:    runtime.GOMAXPROCS(0),
		memTotal:    readFirstLine("/proc/meminfo", "MemTotal"),
		loadBefore:  loadAverage(),
	}
	if kb, err := strconv.ParseUint(strings.TrimSuffix(m.memTotal, " kB"), 10, 64); err == nil {
		m.memTotal = strconv.FormatUint(kb>>20, 10) + " GiB"
	}
	m.commit = gitCommit(root)
	var sdks []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdks = append(sdks, "go-sdk "+d.Version)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "testdata", "thirdparty", "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		if i := strings.Index(string(b), `"version": "`); i >= 0 {
			v, _, _ := strings.Cut(string(b[i+len(`"version": "`):]), `"`)
			sdks = append(sdks, "@modelcontextprotocol/sdk "+v)
		}
	}
	m.sdkVersions = strings.Join(sdks, ", ")
	return m
}

// gitCommit returns the short commit of root, marked when the tree has
// changes; "unknown" without git.
func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		commit += " (with uncommitted changes)"
	}
	return commit
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown" // untested: only off Linux
	}
	return strings.Join(f[:3], " / ")
}
