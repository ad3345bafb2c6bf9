//go:build linux

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// serve --stdio whose client stops reading its output (closes its end of
// the pipe) while it answers goes on to its own end at stdin's EOF: a
// write to a broken stdout fails, it does not kill mcpbridge with SIGPIPE,
// which skipped every shutdown (a stdio server's own children outlived it).
func TestServeStdioSurvivesClosedOutput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("reading the initialize answer: %v", err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	stdout.Close() // the client stops reading
	for id := 2; id < 6; id++ {
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"ping"}`+"\n"); err != nil {
			break // it is gone
		}
		time.Sleep(100 * time.Millisecond)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if exit, ok := errors.AsType[*exec.ExitError](err); ok && !exit.Exited() {
			t.Errorf("serve --stdio ended by %v once its client stopped reading, want its own exit", exit)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve --stdio did not end at its stdin's EOF")
	}
}
