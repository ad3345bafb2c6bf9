package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TBXark/mcp-proxy (Go, on mark3labs/mcp-go) is the peer gateway the
// issue measures serve --http against. The module proxy reachable here
// refuses it, so its source comes as an archive in a folder outside the
// repository (-peers); without the folder its row is skipped with a note.

// tbxarkArchive is the archive's name in the peers folder.
const tbxarkArchive = "tbxark-mcp-proxy-4f78891.tar.gz"

// buildTBXark builds TBXark/mcp-proxy from the archive in peersDir into
// dir, and returns the binary; "" with the reason when the archive is not
// there.
func buildTBXark(peersDir, dir string) (bin, skipped string, err error) {
	archive := filepath.Join(peersDir, tbxarkArchive)
	if _, err := os.Stat(archive); err != nil {
		return "", fmt.Sprintf("TBXark/mcp-proxy (Go): skipped, %s not found (-peers)", archive), nil
	}
	src := filepath.Join(dir, "tbxark-src")
	if err := untarGz(archive, src); err != nil {
		return "", "", fmt.Errorf("TBXark/mcp-proxy: unpacking %s: %w", archive, err)
	}
	bin = filepath.Join(dir, "tbxark-mcp-proxy")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("TBXark/mcp-proxy: building (its dependencies come from the module proxy): %w: %s", err, strings.TrimSpace(string(b)))
	}
	return bin, "", nil
}

// untarGz unpacks the regular files of a .tar.gz into dir.
func untarGz(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.Clean("/"+h.Name)) // never above dir
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		out, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, io.LimitReader(tr, 64<<20))
		if err := errors.Join(err, out.Close()); err != nil {
			return err
		}
	}
}

// tbxarkCaller is a raw go-sdk client calling echo through TBXark's
// mcp-proxy serving Streamable HTTP, with the responder behind it on
// stdio.
func tbxarkCaller(ctx context.Context, bin, dir string, spec childSpec) (caller, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("TBXark/mcp-proxy: finding a free port: %w", err) // untested: loopback listening fails only without ports
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	config := map[string]any{
		"mcpProxy": map[string]any{"addr": "127.0.0.1:" + port, "name": "p", "version": "1", "type": "streamable-http",
			"options": map[string]any{"logEnabled": false}},
		"mcpServers": map[string]any{"resp": map[string]any{"command": spec.exe, "args": spec.args, "env": spec.env}},
	}
	b, _ := json.Marshal(config)
	path := filepath.Join(dir, "tbxark-config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	proc := exec.Command(bin, "--config", path)
	proc.Env = cleanEnviron()
	out := &tailBuffer{max: 4 << 10}
	proc.Stdout, proc.Stderr = out, out
	if err := proc.Start(); err != nil {
		return nil, fmt.Errorf("TBXark/mcp-proxy: starting: %w", err)
	}
	sess, err := connectWhenUp(ctx, "http://127.0.0.1:"+port+"/resp/mcp", 30*time.Second)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("TBXark/mcp-proxy: %w (output: %s)", err, out), stopProcess(proc))
	}
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
		if err != nil {
			return err
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("TBXark/mcp-proxy: echo returned %+v, want text %q", res.Content, echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion,
		closer: func() error {
			closeErr, stopErr := sess.Close(), stopProcess(proc)
			if _, ok := errors.AsType[*exec.ExitError](stopErr); ok && strings.Contains(out.String(), "Shutdown signal received") {
				// Its shutdown waits 5 s for the streams it keeps open, then
				// exits with status 1: an end we asked for, not a crash.
				stopErr = nil
			}
			if err := errors.Join(closeErr, stopErr); err != nil {
				return fmt.Errorf("TBXark/mcp-proxy: %w (output: %s)", err, out)
			}
			return nil
		}}, nil
}
