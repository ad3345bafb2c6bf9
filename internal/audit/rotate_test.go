package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A trail moved away while open (logrotate: mv audit.jsonl
// audit.jsonl.1, then maybe a new empty audit.jsonl) is reopened at its
// path by the first line written lookEvery after the move, which begins
// the new file continuing the old one's chain (a line written before it
// goes on to the moved file): the two verify in order as one. The lines
// used to go on to the moved file, and no file was made at the path.
func TestRotatedTrailReopened(t *testing.T) {
	for _, create := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "audit.jsonl")
		l, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		write := func(name string) {
			t.Helper()
			if err := l.Write(Entry{Time: time.Unix(0, 0).UTC(), Identity: "alice", Method: "tools/call", Name: name, Outcome: "ok"}); err != nil {
				t.Fatalf("writing %s: %v", name, err)
			}
		}
		write("a")
		write("b")
		old := path + ".1"
		if err := os.Rename(path, old); err != nil {
			t.Fatal(err)
		}
		if create {
			if err := os.WriteFile(path, nil, 0o640); err != nil {
				t.Fatal(err)
			}
		}
		write("b2") // at once: to either file
		time.Sleep(lookEvery)
		write("c")
		if err := l.Check(); err != nil {
			t.Errorf("Check after the rotation: %v", err)
		}
		write("d")
		l.Close()
		if got := readAll(t, old); strings.Contains(got, `"name":"c"`) {
			t.Errorf("create %v: a line written after the rotation went to the moved file:\n%s", create, got)
		}
		rep, err := VerifyFiles(Genesis, old, path)
		if err != nil || rep.Lines != 5 || len(rep.Fresh) != 0 {
			t.Errorf("create %v: the old and new files: %+v, %v; want 5 entries in one chain", create, rep, err)
		}
		// The new file is the trail's: the next serve takes its lock.
		if l2, err := Open(path, nil); err != nil {
			t.Errorf("create %v: reopening the new file: %v", create, err)
		} else {
			l2.Close()
		}
	}
}
