package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// scenarioResult is one conformance scenario's outcome.
type scenarioResult struct {
	passed   bool
	failures []string // check id: message, for the failed checks
	warnings []string // the same for the checks that only warned
}

// The official conformance suite's server scenarios, against the gateway in
// front of the go-sdk conformance everything-server (a stdio child).
//
// Run 1 serves tools and prompts as the gateway always does,
// mcp__everything__<raw>: the scenarios that call a fixed tool or prompt
// name (test_simple_text, test_simple_prompt, …) cannot pass; resources
// (routed by URI) must. Run 2 serves raw names (Options.RawNames), so
// every scenario exercises the real forwarding path and all must pass:
// tools-call, prompts-get, completion, and the server-to-client traffic of
// a call (elicitation and sampling forwarded to the calling client, log
// messages and progress before the result). The backend speaks 2025-11-25:
// its tools elicit and sample in the middle of a call, which 2026-07-28
// refuses.
func TestConformanceServerScenarios(t *testing.T) {
	conformance := mcptest.ThirdPartyBin(t, "conformance")
	dir := t.TempDir()
	server := buildEverythingServer(t)
	reg := tool.NewRegistry()
	cfg := mcpclient.Config{ServerName: "everything", Transport: mcpclient.TransportStdio, Command: server, AllowSampling: true,
		// The server elicits and samples from inside its tools, which protocol
		// 2026-07-28 refuses (it wants multi round-trip results).
		ProtocolVersion: "2025-11-25"}
	startClient(t, cfg, mcpclient.Options{Registry: reg, Elicit: true, Sample: true})

	always := []string{
		"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection",
		"resources-list", "resources-read-text", "resources-read-binary", "resources-templates-read",
		"resources-subscribe", "resources-unsubscribe", "prompts-list", "logging-set-level",
	}
	forwarded := []string{
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
		"tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
		"json-schema-2020-12", "server-sse-polling",
		"prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image",
		"completion-complete",
	}

	t.Run("namespaced", func(t *testing.T) {
		results := runConformance(t, conformance, newGateway(t, reg, Options{}), filepath.Join(dir, "namespaced"))
		mustPass(t, results, always)
		for name, r := range results {
			if strings.HasPrefix(name, "tools-call-") && (r.passed || !strings.Contains(strings.Join(r.failures, " "), "unknown tool")) {
				t.Errorf("%s: want a failure for the namespaced name (unknown tool), got %+v", name, r)
			}
			if strings.HasPrefix(name, "prompts-get-") && (r.passed || !strings.Contains(strings.Join(r.failures, " "), "-32602: unknown prompt")) {
				t.Errorf("%s: want a failure for the namespaced name (unknown prompt), got %+v", name, r)
			}
		}
	})
	// Run 3: stateless, as serve --stateless. The suite's client speaks
	// 2025-11-25, which stateless serving cannot ask anything in the
	// middle of a call (no stream carries a request back): the four
	// scenarios that need it fail, and every other passes. Clients of
	// 2026-07-28 are asked there (TestQuestionsEveryPairing).
	t.Run("stateless", func(t *testing.T) {
		results := runConformance(t, conformance, newGateway(t, reg, Options{RawNames: true, Stateless: true}), filepath.Join(dir, "stateless"))
		asks := map[string]string{
			"tools-call-elicitation": "did not request elicitation", "elicitation-sep1034-defaults": "did not request elicitation",
			"elicitation-sep1330-enums": "did not request elicitation", "tools-call-sampling": "did not request sampling",
		}
		if len(results) < 32 {
			t.Errorf("only %d scenarios ran, want the suite's 32", len(results))
		}
		for name, r := range results {
			why, asked := asks[name]
			switch {
			case !asked && !r.passed:
				t.Errorf("%s: want a pass through the stateless gateway, got %+v", name, r)
			case asked && (r.passed || !strings.Contains(strings.Join(r.failures, " "), why)):
				t.Errorf("%s: want the failure %q of a 2025-11-25 client served statelessly, got %+v", name, why, r)
			}
		}
	})
	t.Run("raw names", func(t *testing.T) {
		results := runConformance(t, conformance, newGateway(t, reg, Options{RawNames: true}), filepath.Join(dir, "raw"))
		mustPass(t, results, append(slices.Clone(always), forwarded...))
		// Every scenario, as the everything-server passes them directly.
		if len(results) < 32 {
			t.Errorf("only %d scenarios ran, want the suite's 32", len(results))
		}
		for name, r := range results {
			if !r.passed {
				t.Errorf("%s: want a pass through the gateway, got %+v", name, r)
			}
		}
	})
}

// runConformance serves g over HTTP, runs every server scenario against
// it, logs a per-scenario table and returns the results.
func runConformance(t *testing.T, conformance string, g *Gateway, out string, args ...string) map[string]scenarioResult {
	t.Helper()
	return runSuite(t, conformance, serveHTTP(t, g, Options{})+"/mcp", out, args...)
}

// runSuite runs the server scenarios args select (every one without)
// against the server at url, logs a per-scenario table and returns the
// results.
func runSuite(t *testing.T, conformance, url, out string, args ...string) map[string]scenarioResult {
	t.Helper()
	results, table, err := suiteResults(node22Env(t), conformance, url, out, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("conformance server scenarios:\n%s", table)
	return results
}

// suiteResults runs the server scenarios args select (every one
// without) against the server at url with env, and returns the results
// and their per-scenario table; it may run off the test's goroutine.
func suiteResults(env []string, conformance, url, out string, args ...string) (map[string]scenarioResult, string, error) {
	if len(args) == 0 {
		args = []string{"--suite", "all"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()
	run := exec.CommandContext(ctx, conformance, append([]string{"server", "--url", url, "-o", out}, args...)...)
	run.Env = env
	output, err := run.CombinedOutput()
	if ctx.Err() != nil {
		return nil, "", fmt.Errorf("conformance suite did not finish: %v\n%s", err, output)
	}
	// A failing scenario makes the suite exit 1; the results say which.
	dirs, rerr := os.ReadDir(out)
	if rerr != nil || len(dirs) == 0 {
		return nil, "", fmt.Errorf("conformance suite left no results (%v, %v):\n%s", err, rerr, output)
	}
	results := map[string]scenarioResult{}
	for _, d := range dirs {
		m := resultDir.FindStringSubmatch(d.Name())
		if m == nil {
			return nil, "", fmt.Errorf("unexpected result directory %q", d.Name())
		}
		r, err := readChecks(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			return nil, "", err
		}
		results[m[1]] = r
	}
	var table strings.Builder
	for _, name := range slices.Sorted(maps.Keys(results)) {
		r := results[name]
		status := "PASS"
		if !r.passed {
			status = "FAIL " + strings.Join(r.failures, "; ")
		}
		if len(r.warnings) > 0 {
			status += " (warnings: " + strings.Join(r.warnings, "; ") + ")"
		}
		fmt.Fprintf(&table, "%-32s %s\n", name, status)
	}
	return results, table.String(), nil
}

// readChecks reads one scenario's checks.json.
func readChecks(path string) (scenarioResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return scenarioResult{}, err
	}
	var checks []struct {
		ID, Status, ErrorMessage string
	}
	if err := json.Unmarshal(data, &checks); err != nil {
		return scenarioResult{}, fmt.Errorf("%s: %v", path, err)
	}
	r := scenarioResult{passed: len(checks) > 0}
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS", "INFO":
		case "WARNING": // a SHOULD the SDK does not do; the suite counts it as passed
			r.warnings = append(r.warnings, c.ID+": "+c.ErrorMessage)
		default:
			r.passed = false
			r.failures = append(r.failures, c.ID+": "+c.ErrorMessage)
		}
	}
	return r, nil
}

// resultDir matches the suite's result directories,
// server-<scenario>-<ISO timestamp>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T`)

// mustPass fails the test for each named scenario that did not pass.
func mustPass(t *testing.T, results map[string]scenarioResult, names []string) {
	t.Helper()
	for _, name := range names {
		if r, ok := results[name]; !ok || !r.passed {
			t.Errorf("scenario %s: want a pass, got %+v (ran: %v)", name, r, ok)
		}
	}
}

// node22Env is the environment of a conformance suite's process: Node 22,
// which the lockfile ships beside the suites, first on PATH.
func node22Env(t *testing.T) []string {
	node := mcptest.ThirdPartyBin(t, "node")
	return append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// conformanceNext returns the entry point of the conformance suite 0.2
// (package.json's alias conformance-next), whose requirement sets are
// frozen per spec revision. Missing, the test fails under CI and is
// skipped otherwise, as mcptest.ThirdPartyBin does.
func conformanceNext(t *testing.T) string {
	t.Helper()
	node := mcptest.ThirdPartyBin(t, "node")
	path := filepath.Join(filepath.Dir(filepath.Dir(node)), "conformance-next", "dist", "index.js")
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("conformance 0.2 is not installed (%v); run scripts/install-thirdparty.sh", err)
		mcptest.Unavailable(t, msg)
	}
	return path
}

// requiredServerScenarios lists the server scenarios the suite at path
// requires for spec revision rev (conformance list --requirements).
func requiredServerScenarios(t *testing.T, path, rev string) []string {
	return mcptest.RequiredScenarios(t, []string{path}, node22Env(t), "server", rev)
}

// The requirement set of 2025-11-25 (conformance 0.2, frozen at the
// revision's release: 30 server scenarios), in one run against one
// gateway in the default mode (sessions) with raw names, in front of the
// go-sdk everything-server pinned to 2025-11-25: every scenario the set
// requires passes, as against the backend alone.
func TestConformanceRequirements20251125(t *testing.T) {
	requirementsThroughGateway(t, "2025-11-25", 30, mcpclient.Config{ProtocolVersion: "2025-11-25"})
}

// The requirement set of 2026-07-28 (conformance 0.2: 37 server
// scenarios), in one run against one gateway in the default mode, the
// same endpoint that gives 2025-11-25 clients sessions, with raw names,
// in front of the go-sdk everything-server at its newest protocol whose
// roots/list the calling client answers (roots: client): every scenario
// the set requires passes, as against the backend alone.
func TestConformanceRequirements20260728(t *testing.T) {
	requirementsThroughGateway(t, "2026-07-28", 37, mcpclient.Config{RootsFromClient: true})
}

// requirementsThroughGateway runs the requirement set of spec revision
// rev (at least want server scenarios) against one default gateway with
// raw names in front of the go-sdk everything-server, an entry with
// sampling allowed and the rest of entry, and fails for each required
// scenario that does not pass.
func requirementsThroughGateway(t *testing.T, rev string, want int, entry mcpclient.Config) {
	t.Helper()
	suite := conformanceNext(t)
	required := requiredServerScenarios(t, suite, rev)
	if len(required) < want {
		t.Fatalf("the %s set requires %d server scenarios, want %d: %v", rev, len(required), want, required)
	}
	reg := tool.NewRegistry()
	entry.ServerName, entry.Transport, entry.Command, entry.AllowSampling = "everything", mcpclient.TransportStdio, buildEverythingServer(t), true
	startClient(t, entry, mcpclient.Options{Registry: reg, Elicit: true, Sample: true})
	results := runConformance(t, suite, newGateway(t, reg, Options{RawNames: true}), t.TempDir(), "--requirements", rev)
	mustPass(t, results, required)
}
