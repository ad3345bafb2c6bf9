package main

import (
	"strings"
	"testing"
)

// TestCodemodeRows runs the code mode rows on the real catalog with few
// calls: the declaration costs fewer tokens than the schemas, its first
// page far fewer, and every call timed; the six-call task takes two model
// turns in code mode against seven direct.
func TestCodemodeRows(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := options{codemodeCalls: 20, rounds: 2, smoke: true}
	res, err := runCodemode(root, o, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if res.tools != 312 || res.fullTokens >= res.schemaTokens || res.pageTokens*20 >= res.schemaTokens || res.nsLargest >= float64(res.fullTokens) {
		t.Errorf("tokens: %d tools, schemas %d, declaration %d, page %d, largest namespace %.0f", res.tools, res.schemaTokens, res.fullTokens, res.pageTokens, res.nsLargest)
	}
	if res.direct <= 0 || res.inner <= 0 || res.oneRun <= 0 {
		t.Errorf("times: direct %v, inner %v, one run %v", res.direct, res.inner, res.oneRun)
	}
	if d, c := res.taskDirect, res.taskCode; d.turns != 7 || c.turns != 2 || c.tokens >= d.tokens || d.wall <= 0 || c.wall <= 0 {
		t.Errorf("six-call task: direct %+v, code mode %+v", d, c)
	}
	tables := codemodeTables(o, res)
	if len(tables) != 3 || !strings.HasPrefix(tables[0].title, "Code mode: tokens") || len(tables[1].rows) != 3 || len(tables[2].rows) != 3 {
		t.Errorf("tables: %+v", tables)
	}
}
