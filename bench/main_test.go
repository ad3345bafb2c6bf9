package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// The benchmarks' servers re-execute this binary.
	runIfChild()
	mcptest.VerifyTestMain(m)
}

// nodeArgs returns -skip-node when the Node TS SDK is not installed and CI
// does not require it, as mcptest.ThirdPartyBin decides for the tests.
func nodeArgs(t *testing.T) []string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := findNode(root, ""); err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("the peer-client row needs Node (fatal because CI=%s): %v", ci, err)
		}
		t.Logf("leaving out the Node TS SDK client: %v", err)
		return []string{"-skip-node"}
	}
	return nil
}

// TestSmoke runs every row and the profiles with tiny
// counts and checks the report: this is what `make bench-smoke` does, in
// process, so the driver's code is covered.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "BENCHMARKS.md")
	const hand = "\n## Analysis\n\nWritten by hand.\n"
	if err := os.WriteFile(out, []byte("# old generated part\n"+handMarker+hand), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "prof")
	// No peers folder: building TBXark/mcp-proxy would double the test's
	// time; its row's absence is noted instead.
	args := append([]string{"-smoke", "-q", "-out", out, "-profile", prof, "-peers", filepath.Join(dir, "nopeers")}, nodeArgs(t)...)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("run %q: exit %d\nstderr:\n%s", args, code, stderr.String())
	}
	report, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Benchmarks", "## Targets", "Rows 1–3: echo call latency", "Rows 1–3: ratios",
		"Row 4: startup", "Row 5: catalog of 250 tools", "Row 6: gateway",
		"Row 7: memory", "Row 8: stateless replicas", "Row 8, store variant: 3 stateless replicas with the store (redis-server) and without", "| 3, store |", "Reproduce: `go run ./bench -smoke", "Byte-identical: every round, all 250",
		"## Tool search: retrieval on real MCP servers' tools", "| held out | 68 |", "## Tool search: model-visible tokens", "| search off | 312 |",
		"## Tool search: latency", "| ranker | 1000 |", "| tool search recall@5: ranker ≥ plain BM25 (the better of the two) + 5 points |",
		"## Identity: JWT auth, a 100-rule policy and the audit trail on a call", "| audit lines per second (O_APPEND, chained) |",
		"raw go-sdk → supergateway (Node)", "raw go-sdk → mcp-proxy (punkpeye) (Node)",
		"## Definition scan: poisoned corpus and real tools", "| definition scan: real tools flagged medium or high ≤ 1% |",
		"TBXark/mcp-proxy (Go): skipped", "raw go-sdk over HTTP (HTTP floor)", "| mcpbridge serve --http / HTTP floor: what the gateway and its backend add |",
		handMarker + hand,
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(report), "old generated part") {
		t.Error("report kept the old generated part")
	}
	if !strings.Contains(stdout.String(), "== Targets") {
		t.Errorf("stdout lacks the targets table:\n%s", stdout.String())
	}
	for _, name := range []string{"bridge-call.cpu.pprof", "bridge-call.allocs.pprof", "bridge-call.allocs.base.pprof", "sdk-call.cpu.pprof", "catalog.cpu.pprof"} {
		if fi, err := os.Stat(filepath.Join(prof, name)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v (size %d)", name, err, sizeOf(fi))
		}
	}
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}

// TestRunErrors checks that bad invocations fail with a message naming the
// problem, before anything is started.
func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-only", "calls,bogus"}, 2, `-only: "bogus" is not a row group`},
		{[]string{"-servers", "1,x"}, 2, `-servers: "x" is not a positive server count`},
		{[]string{"-servers", "0"}, 2, `-servers: "0" is not a positive server count`},
		{[]string{"-replicas", "4,2"}, 2, `-replicas: "4,2" is not a list of ascending replica counts`},
		{[]string{"-replicas", "1,x"}, 2, `-replicas: "1,x" is not a list of ascending replica counts`},
		{[]string{"-replica-rounds", "0"}, 2, `-replica-rounds must be at least 1, got 0`},
		{[]string{"-calls", "0"}, 2, "-calls must be at least 1, got 0"},
		{[]string{"-mem-rounds", "-1"}, 2, "-mem-rounds must be at least 1, got -1"},
		{[]string{"-calls", "5", "-rounds", "6"}, 2, "-rounds (6) must not exceed -calls (5)"},
		{[]string{"-warmup", "-1"}, 2, "-warmup and -init-delay must not be negative"},
		{[]string{"extra"}, 2, `unexpected arguments ["extra"]`},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag"},
		{[]string{"-variants", "raw-sdk,bogus"}, 2, `-variants: "bogus" is not a call variant`},
		{[]string{"-baseline", "/bin/true"}, 2, `-baseline measures two builds of mcpbridge against each other, which BENCHMARKS.md does not report: add -out ""`},
		{[]string{"-q", "-only", "calls", "-out", "", "-skip-node", "-variants", "serve-http-base", "-baseline", "/nonexistent/mcpbridge"}, 1, "-baseline: stat /nonexistent/mcpbridge"},
		{[]string{"-h"}, 0, "Usage of bench"},
		{[]string{"-only", "calls", "-node", "/nonexistent/node"}, 1, "finding node"},
		// The bridge refuses a list of more than 1000 pages: the row fails.
		{[]string{"-q", "-only", "catalog", "-tools", "1001", "-page", "1", "-catalog-rounds", "1"}, 1, "catalog: bridge, 1001-tool catalog"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}

func TestMainStatus(t *testing.T) {
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldArgs, oldStderr := os.Args, os.Stderr
	os.Args, os.Stderr = []string{"bench", "-calls", "0"}, stderr
	got := mainStatus()
	os.Args, os.Stderr = oldArgs, oldStderr
	stderr.Close()
	b, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	if got != 2 || !strings.Contains(string(b), "-calls must be at least 1") {
		t.Errorf("mainStatus with -calls 0 = %d, stderr %q; want 2 and the reason", got, b)
	}
}

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		check func(o options) string
	}{
		{"full defaults", nil, func(o options) string {
			return cmp.Diff([]any{2000, 40, 64, []int{1, 10, 30}, 10000, 100, 30, 10000, "BENCHMARKS.md", rowGroups(), "go run ./bench -only calls"},
				[]any{o.seqCalls, o.rounds, o.workers, o.servers, o.tools, o.pageSize, o.memServers, o.searchTools, o.out, o.only, o.command("calls")})
		}},
		{"smoke defaults write nothing", []string{"-smoke"}, func(o options) string {
			return cmp.Diff([]any{40, 2, []int{1, 3}, 250, 2, 1000, "", "go run ./bench -smoke"},
				[]any{o.seqCalls, o.rounds, o.servers, o.tools, o.memServers, o.searchTools, o.out, o.command("")})
		}},
		{"explicit flags beat smoke defaults", []string{"-smoke", "-calls", "60", "-out", "x.md", "-skip-node", "-only", "calls, memory"}, func(o options) string {
			return cmp.Diff([]any{60, "x.md", []string{"calls", "memory"}, "go run ./bench -smoke -calls=60 -skip-node -only memory"},
				[]any{o.seqCalls, o.out, o.only, o.command("memory")})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseOptions(tc.args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := tc.check(o); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarkdownWithoutOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	o := options{only: rowGroups()}
	tables := []table{{title: "T", command: "go run ./bench", header: []string{"a", "b"}, rows: [][]string{{"1", "2"}}, notes: []string{"n"}}}
	if err := writeMarkdown(path, o, machine{date: "d"}, tables); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## T\n\nReproduce: `go run ./bench`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- n\n", "| date | d |", handMarker + "\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
	if err := writeMarkdown(filepath.Join(path, "sub", "x.md"), o, machine{}, tables); err == nil {
		t.Error("writing below a file succeeded")
	}
}

// TestSkipNode runs the call rows without the peer client, with progress
// lines, into a report path that cannot be written.
func TestSkipNode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-smoke", "-only", "calls", "-skip-node", "-node", "/nonexistent/node", "-variants", "raw-sdk, raw-bridge", "-out", filepath.Join(file, "B.md")}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "writing "+filepath.Join(file, "B.md")) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and a failed write", code, stderr.String())
	}
	for _, want := range []string{"Node TS SDK client: skipped (-skip-node): finding node", "bridge / raw go-sdk (raw responder)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, unwanted := range []string{"Node TS SDK (go-sdk fixture", "go-sdk fixture  raw go-sdk", "pipe floor"} {
		if strings.Contains(stdout.String(), unwanted) {
			t.Errorf("stdout has %q, which was not selected:\n%s", unwanted, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "] calls: sequential round 1/2") {
		t.Errorf("stderr lacks the progress lines:\n%s", stderr.String())
	}
	if got := gitCommit(t.TempDir()); got != "unknown" {
		t.Errorf("gitCommit outside a repository = %q", got)
	}
}
