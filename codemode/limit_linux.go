package codemode

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitMemory caps the address space of a program's process: what it
// maps now, four times maxMemory (the heap watchdog's line, with the
// collector's headroom) and 1 GiB of slack for threads and the runtime. The watchdog
// stops a program that grows in the interpreter; this stops one builtin
// asked to build gigabytes in one step, which the watchdog cannot reach:
// the runtime fails its allocation and the process ends, not its caller.
func limitMemory(maxMemory int64) {
	mapped := vmSize()
	if mapped == 0 {
		return // untested: /proc is always there on Linux
	}
	limit := uint64(mapped + 4*maxMemory + 1<<30)
	syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}) // best effort: the watchdog remains
}

// vmSize is the process's mapped address space in bytes, 0 when unknown.
func vmSize() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmSize:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// selfExe is this program, to run again: /proc/self/exe is the file this
// process runs even after an upgrade renamed another over its path, or
// deleted it (os.Executable's path would then run the new one, or none).
func selfExe() (string, error) { return "/proc/self/exe", nil }
