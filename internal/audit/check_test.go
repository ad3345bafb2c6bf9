package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"golang.org/x/sys/unix"
)

// A trail on a full disk cannot take a line, and Check says so without
// writing one; once there is room again it says the trail can be
// written, and the chain goes on. A device that refuses every write
// (/dev/full) is never writable. Check runs on a file system of 64 KiB
// of its own (a tmpfs, which needs root): the disk filled by another
// file, as another program would fill it.
func TestCheckFindsAFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		mcptest.Unavailable(t, fmt.Sprintf("mounting a small tmpfs to fill (needs root): %v", err))
	}
	t.Cleanup(func() { unix.Unmount(dir, 0) })
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write := func() error {
		return l.Write(Entry{Time: time.Unix(0, 0).UTC(), Identity: "alice", Method: "tools/call", Name: "x", Outcome: "ok"})
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check with room: %v", err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 128<<10), 0o600); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	if err := l.Check(); !errors.Is(err, unix.ENOSPC) {
		t.Errorf("Check on a full disk: %v, want ENOSPC", err)
	}
	if err := l.Err(); !errors.Is(err, unix.ENOSPC) {
		t.Errorf("Err after Check found the disk full: %v, want ENOSPC: calls are refused before they run", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Errorf("Check once there is room again: %v", err)
	}
	if err := write(); err != nil {
		t.Fatalf("a write once there is room again: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != 2 {
		t.Errorf("the trail: %+v, %v; want 2 lines chained", rep, err)
	}

	full, err := Open("/dev/full", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if err := full.Check(); !errors.Is(err, unix.ENOSPC) {
		t.Errorf("Check of /dev/full: %v, want ENOSPC", err)
	}
}
