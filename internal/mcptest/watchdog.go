package mcptest

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// The watchdog makes a test run that is about to hit go test's -timeout
// diagnosable: shortly before the deadline it sends SIGQUIT to the live
// child processes (a Go child, such as this test binary run by
// ChildCommand, dumps its goroutines and exits; mcppeer.RunIfChild traps
// no signal) and prints this process's goroutines to stderr. A child run
// by ChildCommand also copies its dump into a file of dumpDir (see
// mcppeer.CrashDirEnv), since its stderr goes to the bridge's log, which
// a timed-out test never prints; the watchdog prints those files. Then the
// testing package's own timeout fails the run.

// watchdogMargin is how long before the -timeout deadline the watchdog
// fires: a tenth of the timeout, at most 10 s.
func watchdogMargin(timeout time.Duration) time.Duration {
	return min(timeout/10, 10*time.Second)
}

var dumpDir = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "mcptest-dumps-")
	if err != nil {
		return ""
	}
	return dir
})

// startWatchdog arms the watchdog for the run's -timeout and returns its
// stop function. Without a timeout it does nothing.
func startWatchdog(out io.Writer) (stop func()) {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	timeout, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || timeout <= 0 {
		return func() {}
	}
	t := time.AfterFunc(timeout-watchdogMargin(timeout), func() { dumpAll(out, time.Second) })
	return func() { t.Stop() }
}

// dumpAll sends SIGQUIT to the live children, prints this process's
// goroutines to out, waits up to settle for the children's dumps and
// prints those in dumpDir.
func dumpAll(out io.Writer, settle time.Duration) {
	children := Children()
	fmt.Fprintf(out, "mcptest watchdog: the test run is about to time out; SIGQUIT to children %v\n", children)
	for _, pid := range children {
		syscall.Kill(pid, syscall.SIGQUIT)
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	fmt.Fprintf(out, "mcptest watchdog: goroutines of the test process (pid %d):\n%s\n", os.Getpid(), buf)
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) && len(Children()) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	printDumps(out)
}

// printDumps prints the child dumps in dumpDir.
func printDumps(out io.Writer) {
	dir := dumpDir()
	if dir == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			continue
		}
		fmt.Fprintf(out, "mcptest watchdog: goroutines of child %s:\n%s\n", filepath.Base(path), b)
	}
}
