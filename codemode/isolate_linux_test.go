package codemode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/codemode"
)

// A program's process gets none of its caller's environment: a secret in
// the caller's (a gateway's tokens) is not in the process a model's code
// runs in.
func TestRunProcessHasNoneOfTheCallersEnvironment(t *testing.T) {
	t.Setenv("MCPBRIDGE_TEST_SECRET", "s3cret-value")
	// Without the variables the process is given, as in production.
	for _, key := range []string{"GORACE", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(key); ok {
			os.Unsetenv(key)
			t.Cleanup(func() { os.Setenv(key, v) })
		}
	}
	f := newFixture(t)
	seen := make(chan []byte, 1)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if env, ok := childEnviron(t); ok {
				seen <- env
				return
			}
		}
		seen <- nil
	}()
	if _, err := f.run(t, "await sleep(3000); return 1", codemode.Options{}); err != nil {
		t.Fatal(err)
	}
	env := <-seen
	if env == nil {
		t.Fatal("found no program process of this one")
	}
	if bytes.Contains(env, []byte("s3cret-value")) || bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("the program's process has the caller's environment: %q", env)
	}
}

// childEnviron returns the environment of a program's process of this
// process, if one runs.
func childEnviron(t *testing.T) ([]byte, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	me := strconv.Itoa(os.Getpid())
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ")".
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 2 || fields[1] != me {
			continue
		}
		dir := filepath.Dir(stat)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !bytes.Contains(cmdline, []byte("__codemode-run")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			t.Logf("reading %s/environ: %v", dir, err)
			continue
		}
		return env, true
	}
	return nil, false
}
