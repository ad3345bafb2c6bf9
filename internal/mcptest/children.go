package mcptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/goleak"
)

// Children returns the PIDs of this process's live (not zombie) children,
// from /proc. Elsewhere than Linux it returns nil.
func Children() []int {
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// Fields after the parenthesized command: state, ppid, ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == self {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}

// VerifyNoChildren reports the child processes still alive after a test
// run, waiting up to timeout for them to go. Use it in TestMain after the
// tests, so a test that leaves a server process behind fails the run.
func VerifyNoChildren(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		left := Children()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range left {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				desc = append(desc, fmt.Sprintf("%d (%s)", pid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
			}
			return fmt.Errorf("child processes left behind: %s", strings.Join(desc, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// GroupMembers returns the PIDs of the live (not zombie) processes in the
// process group pgid, from /proc.
func GroupMembers(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// state, ppid, pgrp, ...
		fields := strings.Fields(s[i+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			out = append(out, pid)
		}
	}
	return out
}

// VerifyTestMain runs m's tests, then fails the run when a goroutine leaked
// (goleak) or a child process survived (VerifyNoChildren, waiting up to 10
// s), runs cleanups, and exits. Call it last in TestMain, after RunIfChild.
//
// It also arms the watchdog (watchdog.go): shortly before go test's
// -timeout, the goroutines of this process and of its live children are
// dumped to stderr. The processes the tests start inherit a GORACE that
// skips the race detector's pause at exit (quickRaceExit).
//
// m is a *testing.M, or one wrapped to stop what the whole binary shares
// (a browser) once the tests ran, before the checks.
func VerifyTestMain(m interface{ Run() int }, cleanups ...func()) {
	quickRaceExit()
	stop := startWatchdog(os.Stderr)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		stop()
		for _, c := range cleanups {
			c()
		}
		if dir := dumpDir(); dir != "" {
			os.RemoveAll(dir)
		}
		if err := VerifyNoChildren(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
		os.Exit(code)
	}))
}
