package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// startEverything runs server-everything in one of its HTTP modes ("sse"
// or "streamableHttp") on a free loopback port and returns its base URL
// once it listens.
func startEverything(t *testing.T, mode string) string {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), fmt.Sprint(port)) {
				close(listening)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-listening:
	case <-time.After(60 * time.Second):
		t.Fatalf("server-everything %s did not start listening on %d", mode, port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// A server that speaks only the legacy HTTP+SSE transport, reached with
// transport: sse: its tools are listed and called.
func TestServerEverythingSSE(t *testing.T) {
	t.Parallel()
	base := startEverything(t, "sse")
	cfg := writeConfig(t, fmt.Sprintf(`- id: legacy
  name: mcp-client
  config:
    serverName: legacy
    transport: sse
    url: %s/sse
`, base))
	r := mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != ExitOK || !strings.Contains(r.stdout, "mcp__legacy__echo") || !strings.Contains(r.stdout, "mcp__legacy__get-sum") {
		t.Fatalf("tools: %+v", r)
	}
	r = mcpbridge(t, "", "call", "--config", cfg, "mcp__legacy__get-sum", `{"a": 20, "b": 22}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "42") {
		t.Errorf("call: %+v", r)
	}
}

// runWithStderr runs this test binary as mcpbridge with args, its stderr
// on w (a pseudo-terminal or a pipe), and returns its stdout.
func runWithStderr(t *testing.T, w *os.File, args ...string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, w
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stdout.String())
	}
	return stdout.String()
}

// On a real pseudo-terminal a long call shows its progress notifications
// as a live line on stderr, erased at the end; through a pipe, nothing.
func TestCallProgressOnPTY(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	args := []string{"call", "--config", cfg, "mcp__everything__trigger-long-running-operation", `{"duration": 1.5, "steps": 3}`}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&screen, ptmx) // until the terminal closes (EIO)
		close(read)
	}()
	out := runWithStderr(t, tty, args...)
	tty.Close()
	<-read
	if !strings.Contains(out, "Long running operation completed") {
		t.Errorf("stdout: %q", out)
	}
	got := screen.String()
	for _, want := range []string{
		"\r\x1b[Kmcp__everything__trigger-long-running-operation 1/3 (33%)",
		"\r\x1b[Kmcp__everything__trigger-long-running-operation 3/3 (100%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal lacks %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the line is not erased at the end:\n%q", got)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runWithStderr(t, w, args...)
	w.Close()
	piped, _ := io.ReadAll(r)
	if bytes.Contains(piped, []byte("1/3")) || bytes.Contains(piped, []byte("\x1b[K")) {
		t.Errorf("progress through a pipe: %q", piped)
	}
}

// The server's message is on the line; with --json, even on a terminal,
// there is no progress line (and no progress token is sent).
func TestCallProgressMessageAndJSON(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	for _, c := range []struct {
		json bool
		want string
	}{{false, "\r\x1b[Kmcp__web__slow 0/20 (0%) started"}, {true, ""}} {
		args := []string{"call", "--url", hs.URL, "--name", "web", "mcp__web__slow", `{"ms": 20}`}
		if c.json {
			args = append(args, "--json")
		}
		var stdout, stderr lockedBuffer
		code := Main(context.Background(), IO{Args: args, Stdout: &stdout, Stderr: &stderr, StderrIsTerminal: true})
		if code != ExitOK || !strings.Contains(stdout.String(), "slept 20 ms") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		}
		if got := stderr.String(); c.want != "" && !strings.Contains(got, c.want) || c.want == "" && strings.Contains(got, "started") {
			t.Errorf("json=%v: stderr %q, want %q", c.json, got, c.want)
		}
	}
}

// An image from server-everything is saved, by default in the per-user
// cache directory, named by its content hash, byte for byte as the server
// sent it, and the output names it; --json saves nothing and keeps the
// base64. (server-everything's tiny image has a broken CRC in its iCCP
// chunk, so image/png reads its header only; TestCallSavesValidPNG decodes
// a whole one.)
func TestCallSavesImage(t *testing.T) {
	cfg := everythingConfig(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	path, data := savedImage(t, "--config", cfg, "mcp__everything__get-tiny-image")
	if dir := filepath.Dir(path); dir != filepath.Join(cache, "mcpbridge") {
		t.Errorf("saved in %s", dir)
	}
	if c, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || c.Width != 20 {
		t.Errorf("not a PNG: %+v %v", c, err)
	}
	os.RemoveAll(filepath.Join(cache, "mcpbridge"))
	r := mcpbridge(t, "", "call", "--json", "--config", cfg, "mcp__everything__get-tiny-image", "{}")
	var res struct {
		Value struct {
			Content []struct{ Data []byte } `json:"content"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != ExitOK {
		t.Fatalf("--json: %v %+v", err, r)
	}
	if !slices.ContainsFunc(res.Value.Content, func(c struct{ Data []byte }) bool { return bytes.Equal(c.Data, data) }) {
		t.Error("the saved file is not the image the server sent")
	}
	if _, err := os.Stat(filepath.Join(cache, "mcpbridge")); err == nil {
		t.Error("--json saved the image")
	}
}

// A valid PNG saved with --save-dir decodes whole.
func TestCallSavesValidPNG(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	dir := t.TempDir()
	path, data := savedImage(t, "--url", hs.URL, "--save-dir", dir, "mcp__remote__image")
	if filepath.Dir(path) != dir {
		t.Errorf("saved in %s", path)
	}
	if img, err := png.Decode(bytes.NewReader(data)); err != nil || img.Bounds().Dx() != 1 {
		t.Errorf("not a PNG: %v", err)
	}
}

// savedImage calls a tool with args, finds the one "[image saved: …]" in
// its output, checks the file's name is its content hash, and returns the
// path and bytes.
func savedImage(t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	r := mcpbridge(t, "", append(append([]string{"call"}, args...), "{}")...)
	m := regexp.MustCompile(`\[image saved: (\S+) \(image/png, (\d+(\.\d)? [KM]?B)\)\]`).FindAllStringSubmatch(r.stdout, -1)
	if r.code != ExitOK || len(m) != 1 {
		t.Fatalf("call: %+v", r)
	}
	data, err := os.ReadFile(m[0][1])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:16]) + ".png"; filepath.Base(m[0][1]) != want {
		t.Errorf("named %s, want %s", filepath.Base(m[0][1]), want)
	}
	return m[0][1], data
}
