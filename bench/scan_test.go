package main

import (
	"strings"
	"testing"
)

func TestScanRowNeedsItsData(t *testing.T) {
	_, err := runScan(t.TempDir(), options{}, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "catalog.json") {
		t.Errorf("runScan without testdata: %v, want an error naming catalog.json", err)
	}
}

func TestScanTable(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := runScan(root, options{smoke: true}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	tab := scanTable(options{smoke: true, only: []string{"scan"}}, r)
	if len(tab.rows) != 2 || tab.command != "go run ./bench -smoke -only scan" {
		t.Errorf("table %+v", tab)
	}
	for _, row := range scanTargets(r) {
		if row[2] != "met" {
			t.Errorf("target %q %s: %s", row[0], row[1], row[2])
		}
	}
	if r.hugeResults != 33 || r.hugeBytes < 900<<10 || r.hugeBytes > 1<<20 {
		t.Errorf("1 MiB definition: %d bytes, %d findings", r.hugeBytes, r.hugeResults)
	}
}
