package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A partial run replaces its own sections and target rows in the report
// and keeps every other section, the header and the hand-written part.
func TestMarkdownMergesPartialRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	old := "# Benchmarks\n\nheader\n\n## Targets\n\n| target | measured | verdict |\n|---|---|---|\n| a | 1 | met |\n| b | 2 | met |\n\n" +
		"## Keep\n\nkept section\n\n## Search\n\nold search\n\n" + handMarker + "\n## Analysis\n\nby hand\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{only: []string{"search"}}
	tables := []table{
		{title: "Targets", header: []string{"target", "measured", "verdict"}, rows: [][]string{{"b", "3", "missed"}, {"c", "4", "met"}}},
		{title: "Search", command: "go run ./bench -only search", header: []string{"x"}, rows: [][]string{{"new search"}}},
		{title: "Latency", command: "go run ./bench -only search", header: []string{"y"}, rows: [][]string{{"new latency"}}},
	}
	if err := writeMarkdown(path, o, machine{date: "D", commit: "C"}, tables); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	want := "# Benchmarks\n\nheader\n\n## Targets\n\n| target | measured | verdict |\n|---|---|---|\n| a | 1 | met |\n| b | 3 | missed |\n| c | 4 | met |\n\n" +
		"## Keep\n\nkept section\n\n## Search\n\nReproduce: `go run ./bench -only search`\n\n| x |\n|---|\n| new search |\n\n- Measured D at commit C by a run of this section alone; the header describes the last full run.\n\n" +
		"## Latency\n\nReproduce: `go run ./bench -only search`\n\n| y |\n|---|\n| new latency |\n\n- Measured D at commit C by a run of this section alone; the header describes the last full run.\n\n" +
		handMarker + "\n## Analysis\n\nby hand\n"
	if got != want {
		t.Errorf("merged report:\n%s\nwant:\n%s", got, want)
	}
}

// Without a generated report to merge into, a partial run writes a whole
// report.
func TestMarkdownPartialRunWithoutReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "B.md")
	for _, old := range []string{"", "no marker", "# Benchmarks\n\nno sections\n" + handMarker} {
		if old != "" {
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		o := options{only: []string{"search"}}
		tables := []table{{title: "Search", command: "c", header: []string{"x"}, rows: [][]string{{"1"}}}}
		if err := writeMarkdown(path, o, machine{date: "D"}, tables); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "| date | D |") || !strings.Contains(string(b), "## Search\n") {
			t.Errorf("from %q: report\n%s", old, b)
		}
	}
}

func TestSearchRowNeedsTheRetrievalSet(t *testing.T) {
	_, err := runSearch(t.TempDir(), options{searchPasses: 1, searchTools: 400}, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "catalog.json") {
		t.Errorf("runSearch without testdata: %v, want an error naming catalog.json", err)
	}
}
