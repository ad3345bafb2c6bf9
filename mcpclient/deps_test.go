package mcpclient_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Using the client alone links neither the plugin host nor its file
// watching: its entry kind is in internal/kinds/client.
func TestNoHostDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "mcpbridge/host") || strings.Contains(dep, "fsnotify") {
			t.Errorf("mcpclient depends on %s", dep)
		}
	}
}
