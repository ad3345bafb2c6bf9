package mcptest

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// On a coming timeout the watchdog dumps the goroutines of the test
// process and, through SIGQUIT, of a live child spawned by ChildCommand.
func TestWatchdogDumpsBothProcesses(t *testing.T) {
	cmd, args, env := ChildCommand(t, "fixture")
	c := exec.Command(cmd, args...)
	c.Env = os.Environ()
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	stdin, err := c.StdinPipe() // the fixture serves until stdin closes
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var childErr bytes.Buffer
	c.Stderr = &childErr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let the child reach RunIfChild
	var out bytes.Buffer
	dumpAll(&out, 10*time.Second)
	err = c.Wait()
	if c.ProcessState.ExitCode() != 2 {
		t.Errorf("child: %v, want exit status 2 (SIGQUIT)", err)
	}
	got := out.String()
	for _, want := range []string{
		"mcptest watchdog: goroutines of the test process",
		"TestWatchdogDumpsBothProcesses", // this goroutine
		"mcptest watchdog: goroutines of child",
		"SIGQUIT: quit",
		"mcppeer.runFixtureChild", // the child's serving goroutine
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dump lacks %q:\n%.3000s", want, got)
		}
	}
	if !strings.Contains(childErr.String(), "goroutine ") {
		t.Errorf("the child's stderr has no goroutine dump: %.500s", childErr.String())
	}
}

func TestWatchdogMargin(t *testing.T) {
	for _, tc := range []struct{ timeout, want time.Duration }{
		{10 * time.Minute, 10 * time.Second},
		{30 * time.Second, 3 * time.Second},
	} {
		if got := watchdogMargin(tc.timeout); got != tc.want {
			t.Errorf("watchdogMargin(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}
