package mcptest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// VerifyNoChildren must see a live child and stop seeing it once reaped.
func TestVerifyNoChildren(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Children(), cmd.Process.Pid) {
		t.Errorf("Children() = %v lacks %d", Children(), cmd.Process.Pid)
	}
	err := VerifyNoChildren(50 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "sleep 30") {
		t.Errorf("VerifyNoChildren = %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := VerifyNoChildren(5 * time.Second); err != nil {
		t.Errorf("after kill: %v", err)
	}
}
