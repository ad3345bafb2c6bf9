package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// serve and its backends re-execute this binary.
	runIfChild()
	mcptest.VerifyTestMain(m)
}

// TestShortSoak runs the soak for a few seconds with a few clients, the
// reloader and the killer, so the driver cannot rot: the whole path (serve
// started, loaded, reloaded, its backends killed, scraped, stopped, its
// processes looked for) runs in every test run.
func TestShortSoak(t *testing.T) {
	args := []string{"-mcpbridge", "self", "-q", "-duration", "3s", "-idle", "1s", "-clients", "4", "-backends", "3",
		"-reload-every", "700ms", "-kill-every", "900ms", "-hang-bound", "20s",
		// A few seconds cannot show a leak; the heap bound here only checks
		// that the figure is read and compared.
		"-heap-slack", "64"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("soak %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"call echo", "list tools", "cancelled call", "serve exit after SIGTERM: status 0", "processes left behind: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	t.Log(out)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-duration", "0s"}, "must be positive"},
		{[]string{"-clients", "0"}, "at least 1"},
		{[]string{"-heap-tolerance", "-1"}, "must not be negative"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("soak %q: exit %d, stderr %q; want 2 and %q", tc.args, code, &stderr, tc.want)
		}
	}
}
