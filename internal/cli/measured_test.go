package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// plainBinary is mcpbridge built without the race detector, for the tests
// that measure a process's memory: under the detector (make test runs
// with -race) a process takes several times the memory it takes for its
// users, so a bound checked on the test binary would say nothing.
var plainBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// measuredCommand is mcpbridgeCommand for a test that measures the
// process's memory: the test binary itself without the race detector,
// else mcpbridge built without it (once per test run).
func measuredCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if !raceEnabled {
		return mcpbridgeCommand(t, args...)
	}
	plainBinary.once.Do(func() {
		plainBinary.dir, plainBinary.err = os.MkdirTemp("", "mcpbridge-plain-")
		if plainBinary.err != nil {
			return
		}
		plainBinary.path = filepath.Join(plainBinary.dir, "mcpbridge")
		build := exec.Command("go", "build", "-o", plainBinary.path, "github.com/mcpbridge/mcpbridge/cmd/mcpbridge")
		if out, err := build.CombinedOutput(); err != nil {
			plainBinary.err = &buildError{err: err, out: out}
		}
	})
	if plainBinary.err != nil {
		t.Fatalf("building mcpbridge without the race detector: %v", plainBinary.err)
	}
	cmd := exec.Command(plainBinary.path, args...)
	cmd.Env = os.Environ()
	return cmd
}

// removePlainBinary removes what measuredCommand built; TestMain calls it.
func removePlainBinary() {
	if plainBinary.dir != "" {
		os.RemoveAll(plainBinary.dir)
	}
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }
