package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// plainBinary is mcpbridge built without the race detector, for the tests
// that measure a process's memory (under the detector, which make test
// uses, a process takes several times the memory it takes for its users,
// so a bound checked on the test binary would say nothing) and for the
// conformance suite's client, which runs a real mcpbridge.
var plainBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// measuredCommand is mcpbridgeCommand for a test that measures the
// process's memory: the test binary itself without the race detector,
// else mcpbridge built without it (plainMcpbridge).
func measuredCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if !raceEnabled {
		return mcpbridgeCommand(t, args...)
	}
	cmd := exec.Command(plainMcpbridge(t), args...)
	cmd.Env = os.Environ()
	return cmd
}

// plainMcpbridge returns the path of mcpbridge built from cmd/mcpbridge
// without the race detector or coverage, once per test run.
func plainMcpbridge(t *testing.T) string {
	t.Helper()
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
	return plainBinary.path
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
