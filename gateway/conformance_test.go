package gateway

import (
	"context"
	"encoding/json"
	"fmt"
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
func runConformance(t *testing.T, conformance string, g *Gateway, out string) map[string]scenarioResult {
	t.Helper()
	base := serveHTTP(t, g, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()
	run := exec.CommandContext(ctx, conformance, "server", "--suite", "all", "--url", base+"/mcp", "-o", out)
	// The suite needs Node 22, installed next to it.
	run.Env = append(os.Environ(), "PATH="+filepath.Dir(conformance)+string(os.PathListSeparator)+os.Getenv("PATH"))
	output, err := run.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("conformance suite did not finish: %v\n%s", err, output)
	}
	// A failing scenario makes the suite exit 1; the results say which.
	dirs, rerr := os.ReadDir(out)
	if rerr != nil || len(dirs) == 0 {
		t.Fatalf("conformance suite left no results (%v, %v):\n%s", err, rerr, output)
	}
	results := map[string]scenarioResult{}
	for _, d := range dirs {
		m := resultDir.FindStringSubmatch(d.Name())
		if m == nil {
			t.Fatalf("unexpected result directory %q", d.Name())
		}
		name := m[1]
		data, err := os.ReadFile(filepath.Join(out, d.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
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
		results[name] = r
	}
	var table strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range results {
			if !yield(name) {
				return
			}
		}
	}) {
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
	t.Logf("conformance server scenarios:\n%s", table.String())
	return results
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
