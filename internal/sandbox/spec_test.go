package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Without Landlock an entry fails unless it allows a best effort, which
// then runs with the rest of the plan (namespace, limits) and ABI 0.
func TestPrepareWithoutLandlock(t *testing.T) {
	st := Start{Path: "/usr/bin/true", Command: "true"}
	if _, err := prepare(Spec{}, st, 0); !errors.Is(err, ErrNoLandlock) {
		t.Errorf("no Landlock, no bestEffort: err = %v, want ErrNoLandlock", err)
	}
	p, err := prepare(Spec{BestEffort: true, OpenFiles: 64}, st, 0)
	if err != nil || p.ABI != 0 || p.OpenFiles != 64 {
		t.Errorf("no Landlock, bestEffort: plan %+v, err %v", p, err)
	}
}

// Paths are sorted into files and directories, relative ones taken from
// the working directory; the defaults come after them.
func TestPrepareSortsPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := prepare(Spec{Read: []string{"file"}, Write: []string{"sub"}}, Start{Path: "/usr/bin/true", Command: "true", Dir: dir}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.ReadFiles[0] != filepath.Join(dir, "file") || p.WriteDirs[0] != filepath.Join(dir, "sub") {
		t.Errorf("plan %+v", p)
	}
	if !slices.Contains(p.ReadDirs, "/usr") || !slices.Contains(p.WriteFiles, "/dev/null") {
		t.Errorf("the defaults are missing: %+v", p)
	}
}
