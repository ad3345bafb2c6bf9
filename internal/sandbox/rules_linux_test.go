//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// abi1Env makes the re-executed test binary restrict itself as a kernel
// of Landlock ABI 1 would (the rules p's plan makes there, under go-
// landlock's V1 best effort), then try to read the file the variable
// names (before "|", a directory to write in after it), outside every
// directory the plan allows: exit 0 when refused, 3 when read.
const abi1Env = "SANDBOX_TEST_ABI1_READ"

func init() {
	if v := os.Getenv(abi1Env); v != "" {
		path, write, _ := strings.Cut(v, "|")
		p := Plan{ReadDirs: []string{filepath.Dir(os.Args[0])}, WriteDirs: []string{write}}
		if err := landlock.V1.BestEffort().Restrict(rules(p, 1)...); err != nil {
			os.Exit(4)
		}
		if _, err := os.ReadFile(path); err == nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
}

// On a kernel of Landlock ABI 1 (Linux 5.13 to 5.18: Ubuntu 22.04's), a
// plan's file rules hold: the rules made for ABI 1 are ones an ABI 1
// ruleset takes, and a file outside the plan is refused. They used to
// ask for refer on the write directories, which ABI 1 does not have: an
// ABI 1 ruleset refuses such a rule (exit 4 here), and on such a kernel
// go-landlock's best effort dropped every rule instead, so a sandboxed
// server read every file of the user while status said "Landlock 1".
func TestRulesHoldOnABI1(t *testing.T) {
	if ABI() == 0 {
		t.Fatal("no Landlock on this kernel: the sandbox's tests need it (Linux 5.13 or later, lsm=landlock)")
	}
	secret, write := filepath.Join(t.TempDir(), "secret"), t.TempDir()
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), abi1Env+"="+secret+"|"+write)
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() == 3 {
		t.Fatal("a file outside the plan was read under ABI 1's rules")
	} else if ok && ee.ExitCode() == 4 {
		t.Fatal("the rules made for ABI 1 are not an ABI 1 ruleset's (refer?)")
	} else if err != nil {
		t.Fatalf("the probe: %v", err)
	}
}
