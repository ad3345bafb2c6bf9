package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// deathSignalEnv makes the re-executed test binary print its parent-death
// signal and exit.
const deathSignalEnv = "SANDBOX_TEST_DEATH_SIGNAL"

// The kernel keeps the parent-death signal per thread, and the exec'd
// image starts on one: init locks main there to read it. In the confining
// step, init keeps the scheduler busy first, as mcpbridge's own long
// initialisation does: main may then resume on any thread.
func init() {
	if os.Getenv(deathSignalEnv) == "" {
		return
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecArg {
		busyScheduler()
		return
	}
	runtime.LockOSThread()
}

// busyScheduler parks main a few times while other goroutines run.
func busyScheduler() {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 3 {
				_ = make([]byte, 1<<20)
				time.Sleep(time.Millisecond)
			}
		})
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
}

// printDeathSignal prints the parent-death signal of the process's first
// thread.
func printDeathSignal() int {
	var sig int32
	if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_GET_PDEATHSIG:", err)
		return 1
	}
	fmt.Println(sig)
	return 0
}

// A confined server keeps the parent-death signal it was started with, so a
// killed mcpbridge takes it along. The confining step is a Go program with
// many threads; new threads start without the signal, and an exec from one
// of them would drop it. Which thread runs the exec is the scheduler's
// choice, hence many starts.
func TestConfinedServerKeepsParentDeathSignal(t *testing.T) {
	mcptest.RequireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), deathSignalEnv+"=1")
	plan, err := sandbox.Prepare(sandbox.Spec{}, sandbox.Start{Path: exe, Command: exe, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	argv, err := plan.Command(exe, exe, []string{exe, "-test.run=^$"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		plan.SysProcAttr(cmd.SysProcAttr)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("start %d: %v (stderr %q)", i, err, exitStderr(err))
		}
		if got := strings.TrimSpace(string(out)); got != fmt.Sprint(int(syscall.SIGKILL)) {
			t.Fatalf("start %d: the confined server's parent-death signal is %s, want %d (SIGKILL)", i, got, syscall.SIGKILL)
		}
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
