package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trail whose first lines were cut, a file that is no trail, an empty
// one, and a line put between two entries each fail verification, naming
// the line; a line cut short by a crash or a full disk does not. Verify
// used to take a first entry's prev as given and skip any line that was
// not an entry, so all of these read "chain intact".
func TestVerifyFindsACutStartAndWhatIsNoTrail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	writeN(t, path, "a", "b", "c")
	lines := strings.SplitAfter(readAll(t, path), "\n")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, data string
		line       int // the line named, 0 for none
		msg        string
	}{
		{"cut start", lines[2], 1, "begins mid-chain"},
		{"not a trail", "hello\nworld\n", 1, "not an audit entry"},
		{"a line put between", lines[0] + "hello\n" + lines[1] + lines[2], 2, "not an audit entry"},
		{"a torn line put between", lines[0] + `{"time":"1970` + "\n" + "world\n" + lines[1], 3, "not an audit entry"},
		{"empty", "", 0, "no audit entry"},
		{"only a torn line", `{"time":"1970-01-01T`, 0, "no audit entry"},
		{"not a trail, no newline", "hello", 1, "not an audit entry"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := verifyFile(t, write(strings.ReplaceAll(c.name, " ", "-"), c.data))
			var be *BrokenError
			switch {
			case err == nil:
				t.Fatalf("Verify: %+v, nil; want it to fail: %s", rep, c.msg)
			case !strings.Contains(err.Error(), c.msg):
				t.Errorf("Verify: %v; want it to say %q", err, c.msg)
			case c.line > 0 && (!errors.As(err, &be) || be.Line != c.line):
				t.Errorf("Verify: %v; want line %d named", err, c.line)
			}
		})
	}
	// What a crash or a full disk leaves, ended by the next line: the
	// first bytes of an entry, or the zeros a file system put in place of
	// data it had not written.
	for _, cut := range []string{`{"time":"1970-01-01T00:00`, `{"ti`, "\x00\x00\x00", `{"time":"19` + "\x00\x00"} {
		p := write("cut", lines[0]+cut+"\n"+lines[1]+lines[2])
		if rep, err := verifyFile(t, p); err != nil || rep.Lines != 3 || rep.Torn != 1 {
			t.Errorf("a line cut short (%q) between entries: %+v, %v; want 3 entries and it skipped", cut, rep, err)
		}
	}
}

// A rotated trail verifies as one chain given its files oldest first; the
// newer file alone begins mid-chain, unless verified from the older one's
// last hash (Report.Last); lines cut at the seam break the chain at the
// newer file's first line. A file the gateway began afresh (started after
// the older one was moved away) begins a chain of its own, and says so.
func TestVerifyFilesOfARotatedTrail(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	writeN(t, whole, "a", "b", "c", "d", "e")
	lines := strings.SplitAfter(readAll(t, whole), "\n")
	write := func(name string, ls ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, cur := write("audit.jsonl.1", lines[:3]...), write("audit.jsonl", lines[3:]...)
	rep, err := VerifyFiles(Genesis, old, cur)
	if err != nil || rep.Lines != 5 || len(rep.Fresh) != 0 {
		t.Fatalf("old then new: %+v, %v; want 5 entries chained", rep, err)
	}
	var be *BrokenError
	if _, err := VerifyFiles(Genesis, cur); !errors.As(err, &be) || be.File != cur || be.Line != 1 || !strings.Contains(err.Error(), "begins mid-chain") {
		t.Errorf("the new file alone: %v; want it to begin mid-chain at its line 1", err)
	}
	oldRep, err := VerifyFiles(Genesis, old)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := VerifyFiles(oldRep.Last, cur); err != nil || rep.Lines != 2 {
		t.Errorf("the new file from the old one's last hash: %+v, %v", rep, err)
	}
	cutOld := write("cut.1", lines[:2]...)
	if _, err := VerifyFiles(Genesis, cutOld, cur); !errors.As(err, &be) || be.File != cur || be.Line != 1 || !strings.Contains(err.Error(), "does not continue") {
		t.Errorf("the old file's last line cut: %v; want the new file's line 1 named", err)
	}
	fresh := filepath.Join(dir, "fresh")
	writeN(t, fresh, "f")
	if rep, err := VerifyFiles(Genesis, old, fresh); err != nil || rep.Lines != 4 || len(rep.Fresh) != 1 || rep.Fresh[0] != fresh {
		t.Errorf("a file begun afresh after the old one: %+v, %v; want it named as beginning a chain of its own", rep, err)
	}
}
