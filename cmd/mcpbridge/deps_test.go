package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary links no test code: a dependency that imports the testing
// package (it happened twice, through a stemmer and through Prometheus's
// text parser) would put its flags and init into every mcpbridge run.
func TestBinaryLinksNoTestingPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if deps := strings.Fields(string(out)); slices.Contains(deps, "testing") {
		t.Error("cmd/mcpbridge links the testing package; find the importer with go list -deps and -f '{{.Imports}}'")
	}
}
