package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peerGateway is another project's stdio → Streamable HTTP gateway from
// npm (pinned in testdata/thirdparty), run with the pinned Node.
type peerGateway struct {
	name string // as the report names it
	bin  string // the package's bin under node_modules/.bin
	// args returns the peer's arguments to serve the responder command
	// line on port, at /mcp.
	args func(port string, command []string) []string
}

// peerGateways are the npm peers measured in front of the responder.
func peerGateways() []peerGateway {
	return []peerGateway{
		{name: "supergateway", bin: "supergateway", args: func(port string, command []string) []string {
			return []string{"--stdio", strings.Join(command, " "), "--outputTransport", "streamableHttp", "--port", port, "--logLevel", "none"}
		}},
		{name: "mcp-proxy (punkpeye)", bin: "mcp-proxy", args: func(port string, command []string) []string {
			return append([]string{"--port", port, "--host", "127.0.0.1", "--"}, command...)
		}},
	}
}

// peerCaller is a raw go-sdk client calling echo through a peer gateway
// process over Streamable HTTP, the responder behind it on stdio.
func peerCaller(ctx context.Context, node nodeSetup, peer peerGateway, spec childSpec) (caller, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%s: finding a free port: %w", peer.name, err) // untested: loopback listening fails only without ports
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	command := append([]string{spec.exe}, spec.args...)
	script := filepath.Join(node.nodeModules, ".bin", peer.bin)
	proc := exec.Command(node.bin, append([]string{script}, peer.args(port, command)...)...)
	proc.Env = cleanEnviron()
	for k, v := range spec.env { // the peer passes its environment to the responder
		proc.Env = append(proc.Env, k+"="+v)
	}
	proc.Env = append(proc.Env, "PATH="+filepath.Dir(node.bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stderr := &tailBuffer{max: 4 << 10}
	proc.Stdout, proc.Stderr = stderr, stderr
	if err := proc.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting: %w", peer.name, err)
	}
	sess, err := connectWhenUp(ctx, "http://127.0.0.1:"+port+"/mcp", 30*time.Second)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w (output: %s)", peer.name, err, stderr), stopProcess(proc))
	}
	closer := func() error { return errors.Join(sess.Close(), stopProcess(proc)) }
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
		if err != nil {
			return err // untested: only a dying peer
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("%s: echo returned %+v, want text %q", peer.name, res.Content, echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion, closer: closer}, nil
}

// connectWhenUp connects a go-sdk client to a Streamable HTTP endpoint
// that may still be starting, for at most wait.
func connectWhenUp(ctx context.Context, url string, wait time.Duration) (*mcp.ClientSession, error) {
	deadline := time.Now().Add(wait)
	for {
		sess, err := newSDKClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err == nil {
			return sess, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no MCP session at %s within %v: %w", url, wait, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err() // untested: the benchmark's ctx ends only on a signal
		case <-time.After(50 * time.Millisecond): // a poll interval, not a wait for an event
		}
	}
}
