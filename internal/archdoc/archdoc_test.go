package archdoc

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/mcpbridge/mcpbridge/"

// goList runs go list with args in the module root and returns its
// packages relative to the module.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, module); ok {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}

// architecture returns docs/architecture.md.
func architecture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// listedDirs returns the directories the "## Packages" block names at the
// start of its lines ("tool/", "bench/, bench/responder/").
func listedDirs(t *testing.T, doc string) []string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "## Packages\n\n```\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal(`docs/architecture.md has no "## Packages" code block`)
	}
	var dirs []string
	for line := range strings.Lines(block) {
		if line == "" || line[0] == ' ' {
			continue // a description going on
		}
		for field := range strings.FieldsSeq(line) {
			field = strings.TrimSuffix(field, ",")
			if !strings.HasSuffix(field, "/") {
				break // the description starts
			}
			dirs = append(dirs, strings.TrimSuffix(field, "/"))
		}
	}
	return dirs
}

// Every package of the module is in the list, itself or under a listed
// directory, and every listed directory exists.
func TestPackageListMatchesTheModule(t *testing.T) {
	dirs := listedDirs(t, architecture(t))
	pkgs := goList(t, "./...")
	for _, p := range pkgs {
		if !slices.ContainsFunc(dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
			t.Errorf("package %s is not in docs/architecture.md's package list", p)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join("..", "..", d)); err != nil {
			t.Errorf("docs/architecture.md lists %s/, which does not exist", d)
		}
	}
}

// depsSentence finds the module packages the text says the gateway
// depends on: the backquoted names after "`go list -deps ./gateway`:" up
// to the closing parenthesis.
var depsSentence = regexp.MustCompile("`go list -deps ./gateway`:([^)]*)\\)")

func TestGatewayDependenciesAsDocumented(t *testing.T) {
	m := depsSentence.FindStringSubmatch(architecture(t))
	if m == nil {
		t.Fatal("docs/architecture.md no longer says what `go list -deps ./gateway` lists")
	}
	var said []string
	for _, q := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
		said = append(said, q[1])
	}
	var deps []string
	for _, p := range goList(t, "-deps", "./gateway") {
		if p != "gateway" {
			deps = append(deps, p)
		}
	}
	slices.Sort(said)
	slices.Sort(deps)
	if diff := cmp.Diff(deps, said); diff != "" {
		t.Errorf("the gateway's module dependencies (-go list +docs/architecture.md):\n%s", diff)
	}
}

// hostUsers are the packages that may depend on the plugin host: the host,
// the entry kinds (each the adapter between the host and one library),
// the programs, their reading of config files into the host's plans
// (internal/configsource), serve's wiring of them (internal/gatewayrun)
// and the readers of the host's plans and Status (internal/report,
// internal/console, internal/metrics). A library
// package (the client, the tool view, the agent, sampling, the gateway's
// identity) stands without the host.
var hostUsers = []string{"host", "internal/kinds/", "internal/cli", "cmd/", "bench",
	"internal/configsource", "internal/gatewayrun", "internal/report", "internal/console", "internal/metrics"}

func TestOnlyKindsAndProgramsUseTheHost(t *testing.T) {
	for line := range strings.Lines(strings.Join(goList(t, "-f", "{{.ImportPath}}:{{join .Deps \",\"}}", "./..."), "\n")) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), ":")
		if !slices.Contains(strings.Split(deps, ","), module+"host") {
			continue
		}
		if !slices.ContainsFunc(hostUsers, func(u string) bool { return pkg == u || strings.HasPrefix(pkg, strings.TrimSuffix(u, "/")+"/") }) {
			t.Errorf("%s depends on the plugin host; an entry kind in internal/kinds should adapt it instead", pkg)
		}
	}
}
