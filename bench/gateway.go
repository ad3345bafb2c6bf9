package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// This file holds the rows that go through what is built on the bridge:
// the gateway in process and `mcpbridge serve` (row 6), and the host
// (startup through host.Apply).

// gatewayCaller is a raw go-sdk client calling echo through a Gateway in
// this process, whose registry holds one bridge server for spec: client →
// gateway (stdio over an OS pipe pair, or Streamable HTTP on loopback) →
// registry → bridge → stdio → server, what `mcpbridge serve` puts between
// an MCP client and a server.
func gatewayCaller(ctx context.Context, spec childSpec, overHTTP bool) (_ caller, err error) {
	const server = "bench"
	srv, reg, err := startBridge(ctx, server, spec, "")
	if err != nil {
		return nil, err
	}
	gw := gateway.New(reg, gateway.Options{})
	serveCtx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	var closers []func() error // in order
	shutdown := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		stop()
		errs = append(errs, gw.Close(), <-served, srv.Close())
		return errors.Join(errs...)
	}
	var t mcp.Transport
	if overHTTP {
		ln, err := gateway.Listen("127.0.0.1:0", gateway.Options{})
		if err != nil { // untested: loopback listening fails only without ports
			served <- nil
			return nil, errors.Join(err, shutdown())
		}
		go func() { served <- gw.ServeListener(serveCtx, ln) }()
		t = &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}
	} else {
		// Two OS pipes, as between mcpbridge serve --stdio and its client.
		cr, gw1, err1 := os.Pipe()
		gr, cw, err2 := os.Pipe()
		if err := errors.Join(err1, err2); err != nil {
			served <- nil
			return nil, errors.Join(fmt.Errorf("gateway: pipes: %w", err), shutdown()) // untested: only when out of file descriptors
		}
		go func() { served <- gw.ServeStdio(serveCtx, gr, gw1) }()
		t = &mcp.IOTransport{Reader: cr, Writer: cw}
	}
	sess, err := newSDKClient().Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil { // untested: the gateway answers initialize unless broken
		return nil, errors.Join(fmt.Errorf("connecting to the gateway: %w", err), shutdown())
	}
	closers = append(closers, sess.Close)
	name := mcpclient.PublicToolName(server, "echo")
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: echoArgs})
		if err != nil {
			return err // untested: only a dying gateway
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("gateway: echo returned %+v, want text %q", res.Content, echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion, closer: shutdown}, nil
}

// firstText returns the text of res's only content block.
func firstText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) != 1 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}

// hostStartup starts n servers of spec through a host: one composition
// file with n mcp-client entries, parsed and applied, as `mcpbridge` does
// at start. It returns the time until Apply returned with every tool
// registered.
func hostStartup(ctx context.Context, spec childSpec, n, tools int) (elapsed time.Duration, err error) {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "- id: s%d\n  name: mcp-client\n  config:\n    serverName: s%d\n    transport: stdio\n    command: %q\n    args: [%s]\n",
			i, i, spec.exe, strings.Join(quoteAll(spec.args), ", "))
	}
	reg := tool.NewRegistry()
	catalog := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{Server: mcpclient.Options{Environ: cleanEnviron()}}))
	h, err := host.New(host.Options{Catalog: catalog, Registry: reg})
	if err != nil {
		return 0, err // untested: the options are complete
	}
	defer func() { err = errors.Join(err, h.Close()) }()
	start := time.Now()
	plan, err := catalog.Parse("bench.yaml", []byte(b.String()), nil)
	if err != nil {
		return 0, fmt.Errorf("parsing the composition: %w", err) // untested: the file is generated
	}
	if err := h.Apply(ctx, plan); err != nil {
		// untested: Apply fails for an invalid plan or a strict entry, and neither is generated
		return 0, fmt.Errorf("applying the composition: %w", err)
	}
	elapsed = time.Since(start)
	if got := reg.Len(); got != n*tools {
		return 0, fmt.Errorf("%d tools registered, want %d", got, n*tools)
	}
	return elapsed, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// serveSetup is what the `mcpbridge serve` variants need: the built
// mcpbridge program and a composition file with one mcp-client entry
// (serverName bench) for the responder.
type serveSetup struct {
	mcpbridge, config string
	wait              time.Duration // how long serve may take to be ready; 0 means 30 s
	base              *serveSetup   // another build's, for -baseline; nil without
	// negotiate: the client negotiates its newest protocol (2026-07-28,
	// served per request) rather than pinning legacyVersion, and offers
	// what a go-sdk client offers by default (defaultSDKClient).
	negotiate bool
}

// baselineSetup is the serveSetup of the mcpbridge binary bin (-baseline),
// its config in a folder of its own under dir.
func baselineSetup(bin, dir string, spec childSpec) (*serveSetup, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	sub := filepath.Join(dir, "baseline")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return nil, fmt.Errorf("-baseline: %w", err) // untested: dir was just created
	}
	s, err := serveConfig(bin, sub, spec)
	return &s, err
}

// newServeSetup builds cmd/mcpbridge into dir and writes the composition
// file for the server spec there.
func newServeSetup(root, dir string, spec childSpec) (serveSetup, error) {
	bin, err := buildProgram(root, dir, "./cmd/mcpbridge")
	if err != nil {
		return serveSetup{}, err
	}
	return serveConfig(bin, dir, spec)
}

// serveConfig writes, in dir, the config of an mcpbridge binary bin
// serving the server spec starts.
func serveConfig(bin, dir string, spec childSpec) (serveSetup, error) {
	config := filepath.Join(dir, "serve.yaml")
	var env []string
	for k, v := range spec.env {
		env = append(env, strconv.Quote(k)+": "+strconv.Quote(v))
	}
	yaml := fmt.Sprintf("- id: bench\n  name: mcp-client\n  config:\n    serverName: bench\n    transport: stdio\n    command: %q\n    args: [%s]\n    env: {%s}\n",
		spec.exe, strings.Join(quoteAll(spec.args), ", "), strings.Join(env, ", "))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		return serveSetup{}, fmt.Errorf("writing the serve config: %w", err) // untested: dir was just created
	}
	return serveSetup{mcpbridge: bin, config: config}, nil
}

// serveCaller is a raw go-sdk client calling echo through a separate
// `mcpbridge serve --stdio` or `mcpbridge serve --http ADDR` process, the
// gateway as users run it, in front of the responder.
func serveCaller(ctx context.Context, s serveSetup, overHTTP bool) (caller, error) {
	if s.wait == 0 {
		s.wait = 30 * time.Second
	}
	args := []string{"serve", "--config", s.config, "--stdio"}
	var (
		t    mcp.Transport
		proc *exec.Cmd
	)
	if !overHTTP {
		cmd := exec.Command(s.mcpbridge, args...)
		cmd.Env = cleanEnviron()
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	} else {
		var addr string
		var err error
		if addr, proc, err = startServeHTTP(ctx, s); err != nil {
			return nil, err
		}
		t = &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}
	}
	client, opts := newSDKClient(), &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion}
	if s.negotiate {
		client, opts = defaultSDKClient(), nil
	}
	sess, err := client.Connect(ctx, t, opts)
	if err != nil {
		err = fmt.Errorf("connecting to mcpbridge serve: %w", err)
		if proc != nil {
			err = errors.Join(err, stopProcess(proc)) // untested: serve answered /healthz, so it answers initialize
		}
		return nil, err
	}
	closer := func() error {
		err := sess.Close()
		if proc != nil {
			err = errors.Join(err, stopProcess(proc))
		}
		return err
	}
	name := mcpclient.PublicToolName("bench", "echo")
	// serve answers before its servers are connected; their tools follow.
	if err := awaitTool(ctx, sess, name, s.wait); err != nil {
		return nil, errors.Join(fmt.Errorf("mcpbridge serve: %w", err), closer())
	}
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: echoArgs})
		if err != nil {
			return err // untested: only a dying serve process
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("mcpbridge serve: echo returned %+v, want text %q", res.Content, echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion, closer: closer}, nil
}

// startServeHTTP starts `mcpbridge serve --http ADDR` (with extra flags)
// on a free loopback port and waits until it is healthy; it returns the
// address and the process, which stopProcess stops.
func startServeHTTP(ctx context.Context, s serveSetup, extra ...string) (string, *exec.Cmd, error) {
	if s.wait == 0 {
		s.wait = 30 * time.Second
	}
	// A free loopback port: the OS picks one, and serve binds it again.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("serve --http: finding a free port: %w", err) // untested: loopback listening fails only without ports
	}
	addr := ln.Addr().String()
	ln.Close()
	proc := exec.Command(s.mcpbridge, append([]string{"serve", "--config", s.config, "--http", addr}, extra...)...)
	proc.Env = cleanEnviron()
	stderr := &tailBuffer{max: 4 << 10}
	proc.Stderr = stderr
	if err := proc.Start(); err != nil {
		return "", nil, fmt.Errorf("serve --http: starting %s: %w", s.mcpbridge, err)
	}
	if err := awaitHealthy(ctx, "http://"+addr+"/healthz", s.wait); err != nil {
		return "", nil, errors.Join(fmt.Errorf("serve --http: %w (stderr: %s)", err, stderr), stopProcess(proc))
	}
	return addr, proc, nil
}

// awaitTool lists the session's tools until name is there, for at most wait.
func awaitTool(ctx context.Context, sess *mcp.ClientSession, name string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		res, err := sess.ListTools(ctx, nil)
		if err != nil {
			return fmt.Errorf("listing tools: %w", err) // untested: serve answers tools/list
		}
		for _, t := range res.Tools {
			if t.Name == name {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tool %q not listed within %v", name, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err() // untested: the benchmark's ctx ends only on a signal
		case <-time.After(20 * time.Millisecond): // a poll interval, not a wait for an event
		}
	}
}

// awaitHealthy polls url until it answers 200 (serve is up and its
// backend ready), for at most wait.
func awaitHealthy(ctx context.Context, url string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err // untested: the URL is built here
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy within %v (last: %v)", url, wait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err() // untested: the benchmark's ctx ends only on a signal
		case <-time.After(20 * time.Millisecond): // a poll interval, not a wait for an event
		}
	}
}

// stopProcess asks cmd to stop (SIGTERM), kills it after 10 s, and reaps
// it. A death by the SIGTERM it was sent is not an error.
func stopProcess(cmd *exec.Cmd) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) && !exit.Exited() {
			return nil // ended by our signal
		}
		return err
	case <-time.After(10 * time.Second): // untested: serve stops on SIGTERM
		_ = cmd.Process.Kill()
		return errors.Join(errors.New("did not stop within 10s of SIGTERM; killed"), <-done)
	}
}
