package childproc

import (
	"slices"
	"sync"
	"testing"
)

// From its first call on, the Stderr callback finds its child in Process,
// so it can tag each line with the PID (mcpclient logs pid=).
func TestStderrSeesItsProcess(t *testing.T) {
	var mu sync.Mutex
	var pids []int
	tr := helperTransport(t, "stderr")
	tr.Stderr = func(string) {
		pid := -1
		if p := tr.Process(); p != nil {
			pid = p.PID()
		}
		mu.Lock()
		pids = append(pids, pid)
		mu.Unlock()
	}
	connect(t, tr)
	p := tr.Process()
	awaitExit(t, p) // once exited, every line has been delivered
	mu.Lock()
	defer mu.Unlock()
	if len(pids) == 0 || slices.ContainsFunc(pids, func(pid int) bool { return pid != p.PID() }) {
		t.Errorf("Process().PID() in the callback: %v, want %d for every line", pids, p.PID())
	}
}
