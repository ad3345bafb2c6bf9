package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A Chain continued over a growing trail reads only what was appended,
// leaves a line still being written for later, and finds a break at the
// seam between two parts as Verify finds it in the whole.
func TestChainContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, "a", "b")
	first, _ := os.ReadFile(path)
	var c Chain
	if tail, err := c.Continue(bytes.NewReader(first)); err != nil || tail != 0 || c.Lines != 2 || c.Offset != int64(len(first)) {
		t.Fatalf("first part: tail %d, %v, %+v", tail, err, c)
	}
	writeN(t, path, "c")
	whole, _ := os.ReadFile(path)
	partial := append(bytes.Clone(whole[c.Offset:]), `{"time":"1970`...)
	if tail, err := c.Continue(bytes.NewReader(partial)); err != nil || tail != len(`{"time":"1970`) || c.Lines != 3 || c.Offset != int64(len(whole)) {
		t.Fatalf("appended part: tail %d, %v, %+v; want 3 lines, the write in progress left", tail, err, c)
	}
	// The seam: the first line appended does not chain to the last one
	// verified (an entry removed at the end, then more appended).
	var cut Chain
	lines := bytes.SplitAfter(whole, []byte("\n"))
	if _, err := cut.Continue(bytes.NewReader(lines[0])); err != nil {
		t.Fatal(err)
	}
	_, err := cut.Continue(bytes.NewReader(lines[2])) // "b" removed
	var broken *BrokenError
	if !errors.As(err, &broken) || broken.Line != 2 || cut.Broken == nil {
		t.Errorf("a line removed at the seam: %v, want the chain broken at line 2", err)
	}
	if _, again := cut.Continue(bytes.NewReader(lines[1])); again != err {
		t.Errorf("a broken Chain continued: %v, want its break again", again)
	}
}
