package mcptest

import (
	"syscall"
	"testing"
)

// RaiseFDLimit raises the soft open-file limit of the test process to at
// least n (children started after inherit it), for tests that hold
// thousands of sockets. It fails the test when the hard limit is below n.
func RaiseFDLimit(t testing.TB, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Fatalf("the open-file limit is %d, the test needs %d", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}
