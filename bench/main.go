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
func rowGroups() []string {
	return []string{"calls", "startup", "catalog", "memory", "replicas", "search", "agent", "scan", "identity", "codemode"}
}

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

	replicas                    []int // replica counts of the replicas row
	replicaCalls, replicaRounds int

	searchPasses int // passes over the queries of the search latency row
	searchTools  int // tools of the search latency row's large catalog

	codemodeCalls int // calls of a round of the code mode rows

	nodeBin        string
	skipNode       bool
	nodeSkipReason string

	peersDir         string // the peer gateways' sources (-peers)
	tbxark           string // TBXark/mcp-proxy built from them, "" when absent
	tbxarkSkipReason string

	profileDir string
	variants   []string // call variant keys to run; nil means all
	baseline   string   // an mcpbridge binary of another build to compare serve --http with (-baseline)
	quiet      bool
}

// smokeDefaults are the flag values of -smoke, for the flags not given.
func smokeDefaults() map[string]string {
	return map[string]string{
		"calls": "40", "rounds": "2", "warmup": "5", "conc-calls": "32", "conc-rounds": "1", "workers": "8",
		"servers": "1,3", "init-delay": "20ms", "startup-rounds": "1",
		"tools": "250", "catalog-rounds": "1",
		"mem-servers": "2", "mem-rounds": "1",
		"replicas": "1,2", "replica-calls": "40", "replica-rounds": "1",
		"search-passes": "1", "search-tools": "1000", "codemode-calls": "50",
	}
}

// parseOptions reads the flags. Every bad value is an error naming the flag.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lists := defineFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q (all options are flags)", fs.Args())
	}
	set := recordFlags(fs, &o)
	if o.smoke {
		if err := applySmoke(fs, set, &o); err != nil {
			return o, err
		}
	}
	if err := lists.parse(&o); err != nil {
		return o, err
	}
	return o, checkOptions(o)
}

// listFlags are the flags holding comma-separated lists, parsed once the
// flag set (and -smoke) has set them.
type listFlags struct {
	only, servers, variants, replicas *string
}

// defineFlags defines every flag of fs, setting o directly except for the
// lists.
func defineFlags(fs *flag.FlagSet, o *options) listFlags {
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
	replicas := fs.String("replicas", "1,2,4", "replica counts of the replicas row, ascending; the first is the baseline")
	fs.IntVar(&o.replicaCalls, "replica-calls", 3000, "calls per round of the replicas row")
	fs.IntVar(&o.replicaRounds, "replica-rounds", 5, "rounds of the replicas row")
	fs.IntVar(&o.searchPasses, "search-passes", 20, "passes over the retrieval queries that the search latency row times")
	fs.IntVar(&o.searchTools, "search-tools", 10000, "tools of the search latency row's large catalog (the real one replicated)")
	fs.IntVar(&o.codemodeCalls, "codemode-calls", 5000, "calls of a round of the code mode rows (direct and from a program)")
	fs.StringVar(&o.peersDir, "peers", "../shared/peers", "folder of the peer gateways' sources (TBXark/mcp-proxy), relative to the module root; its row is skipped when absent")
	fs.StringVar(&o.nodeBin, "node", "", "node executable (default: testdata/thirdparty's Node, else node on PATH)")
	fs.BoolVar(&o.skipNode, "skip-node", false, "leave out the Node TS SDK client instead of failing when it is not installed")
	fs.StringVar(&o.profileDir, "profile", "", "also write CPU and allocation profiles of the bridge's and the raw SDK's call paths and of catalog discovery to this directory")
	variants := fs.String("variants", "", "comma-separated call variant keys to run (default all): "+strings.Join(variantKeys(), ", "))
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	fs.StringVar(&o.baseline, "baseline", "", "an mcpbridge binary of another build: adds the call variant serve-http-base, serve --http run from it, interleaved with this build's, to measure a change side by side (needs -out \"\")")
	return listFlags{only: only, servers: servers, variants: variants, replicas: replicas}
}

// recordFlags returns the flags given on the command line, and keeps in
// o.extraArgs those a reproduce line repeats.
func recordFlags(fs *flag.FlagSet, o *options) map[string]bool {
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
	return set
}

// applySmoke sets the -smoke defaults of the flags not given (set), and
// writes no report unless -out was given.
func applySmoke(fs *flag.FlagSet, set map[string]bool, o *options) error {
	for name, v := range smokeDefaults() {
		if !set[name] {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("-smoke default -%s=%s: %w", name, v, err) // untested: only if smokeDefaults is wrong
			}
		}
	}
	if !set["out"] {
		o.out = ""
	}
	return nil
}

// parse fills o's lists.
func (l listFlags) parse(o *options) error {
	var err error
	if o.only, err = parseOnly(*l.only); err != nil {
		return err
	}
	if o.variants, err = parseVariants(*l.variants); err != nil {
		return err
	}
	if o.replicas, err = parseReplicas(*l.replicas); err != nil {
		return err
	}
	o.servers, err = parseServers(*l.servers)
	return err
}

// parseOnly reads -only.
func parseOnly(s string) ([]string, error) {
	var out []string
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		if !slices.Contains(rowGroups(), g) {
			return out, fmt.Errorf("-only: %q is not a row group (want some of %s)", g, strings.Join(rowGroups(), ", "))
		}
		out = append(out, g)
	}
	return out, nil
}

// parseVariants reads -variants; "" is nil, all variants.
func parseVariants(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(variantKeys(), k) {
			return out, fmt.Errorf("-variants: %q is not a call variant (want some of %s)", k, strings.Join(variantKeys(), ", "))
		}
		out = append(out, k)
	}
	return out, nil
}

// parseServers reads -servers.
func parseServers(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return out, fmt.Errorf("-servers: %q is not a positive server count", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// checkOptions checks the counts and durations.
func checkOptions(o options) error {
	for _, c := range []struct {
		name string
		v    int
	}{
		{"calls", o.seqCalls}, {"rounds", o.rounds}, {"conc-calls", o.concCalls}, {"conc-rounds", o.concRounds},
		{"workers", o.workers}, {"startup-rounds", o.startupRounds}, {"startup-tools", o.startupTools},
		{"tools", o.tools}, {"page", o.pageSize}, {"catalog-rounds", o.catalogRounds},
		{"mem-servers", o.memServers}, {"mem-rounds", o.memRounds},
		{"replica-calls", o.replicaCalls}, {"replica-rounds", o.replicaRounds}, {"search-passes", o.searchPasses}, {"search-tools", o.searchTools},
		{"codemode-calls", o.codemodeCalls},
	} {
		if c.v < 1 {
			return fmt.Errorf("-%s must be at least 1, got %d", c.name, c.v)
		}
	}
	if o.warmup < 0 || o.initDelay < 0 {
		return errors.New("-warmup and -init-delay must not be negative")
	}
	if o.rounds > o.seqCalls {
		return fmt.Errorf("-rounds (%d) must not exceed -calls (%d)", o.rounds, o.seqCalls)
	}
	if o.baseline != "" && o.out != "" {
		return errors.New("-baseline measures two builds of mcpbridge against each other, which BENCHMARKS.md does not report: add -out \"\"")
	}
	return nil
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
func bench(ctx context.Context, o options, stdout, stderr io.Writer) error {
	began := time.Now()
	r := &benchRun{ctx: ctx, o: o, logf: progressLogger(o.quiet, began, stderr)}
	cleanup, err := r.setUp()
	if err != nil {
		return err
	}
	defer cleanup()
	tables, err := r.runRows()
	if err != nil {
		return err
	}
	r.machine.duration = time.Since(began)
	r.machine.loadAfter = loadAverage()
	for _, t := range tables {
		t.print(stdout)
	}
	return r.writeReport(tables)
}

// progressLogger returns the progress line printer: "[  12.3s] …" on
// stderr, nothing when quiet.
func progressLogger(quiet bool, began time.Time, stderr io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		if !quiet {
			fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
		}
	}
}

// benchRun is one run of the driver: what its rows share, and their
// results, which the targets table sums up.
type benchRun struct {
	ctx  context.Context
	o    options
	logf func(format string, args ...any)

	root        string // the module
	exe         string // this executable, which the servers re-execute
	dir         string // scratch files
	machine     machine
	node        *nodeSetup // nil when the calls rows do not run or -skip-node left it out
	defs        []catalogDef
	catalogPath string // the raw child's script of the large catalog
	responder   string // the built responder binary

	calls   *callResults
	startup *startupResults
	catalog *catalogResults
	search  *searchResults
	scan    *scanResults
}

// setUp finds the module, this executable and Node, and builds what the
// rows share in a scratch directory, which cleanup removes.
func (r *benchRun) setUp() (cleanup func(), err error) {
	if r.root, err = moduleRoot(); err != nil {
		return nil, err
	}
	if r.exe, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("finding this executable, which the servers re-execute: %w", err) // untested: needs a broken /proc
	}
	if r.dir, err = os.MkdirTemp("", "mcpbridge-bench-"); err != nil {
		return nil, fmt.Errorf("creating a scratch directory: %w", err) // untested: needs an unwritable TMPDIR
	}
	cleanup = func() { os.RemoveAll(r.dir) }
	r.machine = describeMachine(r.root)
	if err := r.setUpNode(); err != nil {
		cleanup()
		return nil, err
	}
	r.defs = catalogDefs(r.o.tools)
	if r.catalogPath, err = writeScript(r.dir, "catalog", catalogScript(r.defs, r.o.pageSize)); err != nil {
		cleanup()
		return nil, err // untested: the directory was just created (writeScript's errors are tested)
	}
	if r.responder, err = buildResponder(r.root, r.dir); err != nil {
		cleanup()
		return nil, err // untested here: buildResponder's failure is tested on its own
	}
	if err := r.setUpTBXark(); err != nil {
		cleanup()
		return nil, err
	}
	return cleanup, nil
}

// setUpTBXark builds TBXark/mcp-proxy for the calls rows when its source
// is there (-peers), else notes why its row is left out.
func (r *benchRun) setUpTBXark() (err error) {
	if !r.o.runs("calls") {
		return nil
	}
	dir := r.o.peersDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.root, dir)
	}
	r.logf("calls: building TBXark/mcp-proxy from %s", dir)
	r.o.tbxark, r.o.tbxarkSkipReason, err = buildTBXark(dir, r.dir)
	return err
}

// setUpNode finds Node for the calls rows; without it the run fails, or
// with -skip-node leaves out the Node client and says why.
func (r *benchRun) setUpNode() error {
	if !r.o.runs("calls") {
		return nil
	}
	n, err := findNode(r.root, r.o.nodeBin)
	switch {
	case err == nil:
		r.node = &n
		r.machine.nodeVersion = n.version()
	case r.o.skipNode:
		r.o.nodeSkipReason = "skipped (-skip-node): " + err.Error()
	default:
		return fmt.Errorf("%w (or pass -skip-node)", err)
	}
	return nil
}

// benchRow is one row group: run returns its tables.
type benchRow struct {
	group string
	run   func() ([]table, error)
}

// rows are the row groups in run order, profile last.
func (r *benchRun) rows() []benchRow {
	return []benchRow{
		{"calls", r.callsRow},
		{"startup", r.startupRow},
		{"catalog", r.catalogRow},
		{"memory", r.memoryRow},
		{"replicas", r.replicasRow},
		{"search", r.searchRow},
		{"agent", r.agentRow},
		{"scan", r.scanRow},
		{"identity", r.identityRow},
		{"codemode", r.codemodeRow},
		{"profile", func() ([]table, error) {
			return nil, profile(r.ctx, r.o, r.exe, r.responder, r.catalogPath, r.logf)
		}},
	}
}

// selected reports whether the options ask for group.
func (r *benchRun) selected(group string) bool {
	if group == "profile" {
		return r.o.profileDir != ""
	}
	return r.o.runs(group)
}

// runRows runs the selected rows and returns their tables after the
// targets table.
func (r *benchRun) runRows() ([]table, error) {
	var tables []table
	for _, row := range r.rows() {
		if !r.selected(row.group) {
			continue
		}
		ts, err := row.run()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", row.group, err)
		}
		tables = append(tables, ts...)
	}
	targets := targetsTable(r.o, r.calls, r.startup, r.catalog, r.search)
	if r.scan != nil {
		targets.rows = append(targets.rows, scanTargets(r.scan)...)
	}
	return append([]table{targets}, tables...), nil
}

func (r *benchRun) callsRow() (_ []table, err error) {
	var serve serveSetup // built only when a serve variant runs
	if r.o.variants == nil || slices.ContainsFunc(r.o.variants, func(k string) bool { return strings.HasPrefix(k, "serve-") }) {
		serve, err = newServeSetup(r.root, r.dir, responderChild(r.responder, 0, 1))
	}
	if err == nil && r.o.baseline != "" {
		serve.base, err = baselineSetup(r.o.baseline, r.dir, responderChild(r.responder, 0, 1))
	}
	if err == nil {
		r.calls, err = runCalls(r.ctx, r.o, r.exe, r.responder, &serve, r.node, r.logf)
	}
	return tablesOr(err, func() []table { return append(callTables(r.o, r.calls), gatewayTable(r.o, r.calls)) })
}

func (r *benchRun) startupRow() (_ []table, err error) {
	r.startup, err = runStartup(r.ctx, r.o, r.responder, r.logf)
	return tablesOr(err, func() []table { return []table{startupTable(r.o, r.startup)} })
}

func (r *benchRun) catalogRow() (_ []table, err error) {
	r.catalog, err = runCatalog(r.ctx, r.o, r.exe, r.catalogPath, r.defs, r.logf)
	return tablesOr(err, func() []table { return []table{catalogTable(r.o, r.catalog)} })
}

func (r *benchRun) searchRow() (_ []table, err error) {
	r.search, err = runSearch(r.root, r.o, r.logf)
	return tablesOr(err, func() []table { return searchTables(r.o, r.search) })
}

func (r *benchRun) codemodeRow() ([]table, error) {
	res, err := runCodemode(r.root, r.o, r.logf)
	return tablesOr(err, func() []table { return codemodeTables(r.o, res) })
}

func (r *benchRun) agentRow() ([]table, error) {
	res, err := runAgent(r.root, r.o, r.logf)
	return tablesOr(err, func() []table { return []table{agentTable(r.o, res)} })
}

func (r *benchRun) scanRow() (_ []table, err error) {
	r.scan, err = runScan(r.root, r.o, r.logf)
	return tablesOr(err, func() []table { return []table{scanTable(r.o, r.scan)} })
}

func (r *benchRun) replicasRow() ([]table, error) {
	serve, err := newServeSetup(r.root, r.dir, responderChild(r.responder, 0, 1))
	if err != nil {
		return nil, err
	}
	res, err := runReplicas(r.ctx, r.o, serve, r.logf)
	if err != nil {
		return nil, err
	}
	store, err := runReplicaStore(r.ctx, r.o, serve, r.dir, r.logf)
	return tablesOr(err, func() []table { return []table{replicasTable(r.o, res), storeTable(r.o, store)} })
}

func (r *benchRun) memoryRow() ([]table, error) {
	mem, err := runMemory(r.ctx, r.o, r.exe, r.logf)
	return tablesOr(err, func() []table { return []table{memoryTable(r.o, mem)} })
}

// writeReport writes the Markdown report, unless -out is "".
func (r *benchRun) writeReport(tables []table) error {
	if r.o.out == "" {
		return nil
	}
	path := r.o.out
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.root, path) // untested: tests must not write into the module
	}
	if err := writeMarkdown(path, r.o, r.machine, tables); err != nil {
		return err
	}
	r.logf("wrote %s", path)
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
