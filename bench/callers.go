package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// echoArgs and echoText are the benchmark call: every variant sends the
// same arguments and checks the same answer, so no variant can get faster
// by doing less.
var echoArgs = json.RawMessage(`{"message":"hi"}`)

const echoText = "Echo: hi"

// legacyVersion is the protocol version pinned to compare against the
// SDK's default (2026-07-28 with a go-sdk server).
const legacyVersion = "2025-11-25"

// caller is one way of making the echo call. Every variant is measured
// through this interface, in the same way.
type caller interface {
	// seq makes n calls one after another and returns each one's latency.
	seq(ctx context.Context, n int) ([]time.Duration, error)
	// conc makes n calls from workers goroutines at once and returns the
	// time they all took.
	conc(ctx context.Context, n, workers int) (time.Duration, error)
	// protocol is the negotiated protocol version.
	protocol() string
	// close ends the connection and stops the server.
	close() error
}

// goCaller measures a call made in this process.
type goCaller struct {
	call    func(ctx context.Context) error
	version string
	closer  func() error
}

func (g *goCaller) protocol() string { return g.version }
func (g *goCaller) close() error     { return g.closer() }

func (g *goCaller) seq(ctx context.Context, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if err := g.call(ctx); err != nil {
			return nil, fmt.Errorf("sequential call %d: %w", i+1, err)
		}
		lat[i] = time.Since(start)
	}
	return lat, nil
}

func (g *goCaller) conc(ctx context.Context, n, workers int) (time.Duration, error) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := g.call(ctx); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(errs) > 0 {
		return 0, fmt.Errorf("concurrent calls: %w", errs[0])
	}
	return elapsed, nil
}

// newSDKClient is the go-sdk client both the raw variant and the bridge
// use, with the bridge's options (no capabilities, no multi-round trip, a
// list_changed handler), so the two differ only in what the bridge adds.
func newSDKClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpbridge", Version: mcpclient.Version}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		MultiRoundTrip:         &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}, // untested: the benchmark servers never change their lists
	})
}

// defaultSDKClient is a go-sdk client with the SDK's default capabilities,
// as most are built: it offers roots, so a server may ask it for them.
func defaultSDKClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpbridge", Version: mcpclient.Version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}, // untested: the benchmark servers never change their lists
	})
}

// dialSDK connects a raw go-sdk session to a new child through the SDK's
// own CommandTransport. version "" lets the SDK negotiate.
func dialSDK(ctx context.Context, spec childSpec, version string) (*mcp.ClientSession, error) {
	return dialSDKWith(ctx, spec, version, &mcp.CommandTransport{Command: spec.command(), TerminateDuration: 2 * time.Second})
}

// dialSDKWith connects a raw go-sdk session through t.
func dialSDKWith(ctx context.Context, spec childSpec, version string, t mcp.Transport) (*mcp.ClientSession, error) {
	sess, err := newSDKClient().Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("raw go-sdk: connecting to %s: %w", spec, err)
	}
	return sess, nil
}

// rawSDKCaller calls echo with ClientSession.CallTool.
func rawSDKCaller(ctx context.Context, spec childSpec, version string) (caller, error) {
	return rawSDKCallerWith(ctx, spec, version, nil)
}

// rawSDKCallerWith is rawSDKCaller through t (nil: the SDK's CommandTransport).
func rawSDKCallerWith(ctx context.Context, spec childSpec, version string, t mcp.Transport) (caller, error) {
	if t == nil {
		t = &mcp.CommandTransport{Command: spec.command(), TerminateDuration: 2 * time.Second}
	}
	sess, err := dialSDKWith(ctx, spec, version, t)
	if err != nil {
		return nil, err
	}
	call := func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
		if err != nil {
			return err // untested: only a dying server; wrong answers are tested
		}
		if len(res.Content) != 1 || res.IsError {
			return fmt.Errorf("raw go-sdk: echo returned %d blocks (isError %v), want one text block", len(res.Content), res.IsError)
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != echoText {
			return fmt.Errorf("raw go-sdk: echo returned %#v, want text %q", res.Content[0], echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: sess.InitializeResult().ProtocolVersion, closer: sess.Close}, nil
}

// startBridge starts one bridge server for spec in a fresh registry and
// waits until its tools are registered.
func startBridge(ctx context.Context, name string, spec childSpec, version string) (*mcpclient.Server, *tool.Registry, error) {
	return startBridgeWith(ctx, name, spec, version, nil)
}

func startBridgeWith(ctx context.Context, name string, spec childSpec, version string, newTransport func() (mcp.Transport, error)) (*mcpclient.Server, *tool.Registry, error) {
	reg := tool.NewRegistry()
	srv, err := mcpclient.Start(bridgeConfig(name, spec, version), mcpclient.Options{Registry: reg, Environ: cleanEnviron(), NewTransport: newTransport})
	if err != nil {
		// untested: only an invalid config, and the benchmark builds valid ones
		return nil, nil, fmt.Errorf("bridge: starting server %q: %w", name, err)
	}
	if err := srv.WaitReady(ctx); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("bridge: connecting server %q to %s: %w", name, spec, err), srv.Close())
	}
	return srv, reg, nil
}

// bridgeConfig is the config of one stdio server of the bridge.
func bridgeConfig(name string, spec childSpec, version string) mcpclient.Config {
	return mcpclient.Config{
		ServerName:      name,
		Transport:       mcpclient.TransportStdio,
		Command:         spec.exe,
		Args:            spec.args,
		Env:             spec.env,
		ProtocolVersion: version,
	}
}

// bridgeCaller calls echo through the registry: Execute, the forwarded
// tools/call and the result mapping, what a model's call costs.
func bridgeCaller(ctx context.Context, spec childSpec, version string) (caller, error) {
	return bridgeCallerWith(ctx, spec, version, nil)
}

// bridgeCallerWith is bridgeCaller with Options.NewTransport set to
// newTransport (nil: the bridge's own stdio transport).
func bridgeCallerWith(ctx context.Context, spec childSpec, version string, newTransport func() (mcp.Transport, error)) (caller, error) {
	const server = "bench"
	srv, reg, err := startBridgeWith(ctx, server, spec, version, newTransport)
	if err != nil {
		return nil, err
	}
	name := mcpclient.PublicToolName(server, "echo")
	call := func(ctx context.Context) error {
		res, err := reg.Execute(ctx, name, echoArgs)
		if err != nil {
			return err // untested: only for an unknown name, and the name is the one registered
		}
		if res.IsError {
			return fmt.Errorf("bridge: echo failed: %s", res.Error.Message)
		}
		if got := res.Text(); got != echoText {
			return fmt.Errorf("bridge: echo returned %q, want %q", got, echoText)
		}
		return nil
	}
	return &goCaller{call: call, version: srv.Status().ProtocolVersion, closer: srv.Close}, nil
}

// floorCaller is the physical floor: newline-delimited JSON-RPC written to
// and read from a pipe pair to the raw responder, no SDK on either side and
// no decoding beyond finding the id.
type floorCaller struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	nextID int64
	req    []byte // reused request buffer
}

// startFloor starts the floor's server. With handshake it first sends
// initialize (pinned to 2025-11-25, so no per-request metadata is due) and
// notifications/initialized, which a go-sdk server requires before
// tools/call; the raw responder needs neither.
func startFloor(spec childSpec, handshake bool) (*floorCaller, error) {
	cmd := spec.command()
	stdin, stdout, err := startPiped(cmd, "floor")
	if err != nil {
		return nil, err
	}
	f := &floorCaller{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 64<<10)}
	if handshake {
		_, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`+"\n")
		if err == nil {
			_, err = f.stdout.ReadSlice('\n')
		}
		if err == nil {
			_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("floor: initializing %s: %w", spec, err), f.close())
		}
	}
	return f, nil
}

func (f *floorCaller) protocol() string { return "bare JSON-RPC" }

// request appends the tools/call request with id to the reused buffer.
func (f *floorCaller) request(id int64) []byte {
	b := append(f.req[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`+"\n"...)
	f.req = b
	return b
}

// readReply reads one reply line and returns its id.
func (f *floorCaller) readReply() (int64, error) {
	line, err := f.stdout.ReadSlice('\n')
	if err != nil {
		return 0, fmt.Errorf("floor: reading a reply: %w", err) // untested: only a responder that died
	}
	if !bytes.Contains(line, []byte(`"`+echoText+`"`)) {
		return 0, fmt.Errorf("floor: unexpected reply %s", bytes.TrimSpace(line))
	}
	return replyID(line)
}

// replyID finds the id of a reply. Both servers write the envelope's id
// before the result ({"id":N,... from the raw responder, whose map keys are
// sorted; {"jsonrpc":"2.0","id":N,... from the go-sdk), and the echo text
// holds no "id"; anything else is decoded properly.
func replyID(line []byte) (int64, error) {
	if i := bytes.Index(line, []byte(`"id":`)); i >= 0 {
		rest := line[i+len(`"id":`):]
		if end := bytes.IndexByte(rest, ','); end > 0 {
			if id, err := strconv.ParseInt(string(rest[:end]), 10, 64); err == nil {
				return id, nil
			}
		}
	}
	var msg struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return 0, fmt.Errorf("floor: reply without a numeric id: %s", bytes.TrimSpace(line))
	}
	return msg.ID, nil
}

func (f *floorCaller) seq(_ context.Context, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		f.nextID++
		if _, err := f.stdin.Write(f.request(f.nextID)); err != nil {
			// untested: only when the responder died between two calls
			return nil, fmt.Errorf("floor: writing request %d: %w", i+1, err)
		}
		id, err := f.readReply()
		if err != nil {
			return nil, err
		}
		if id != f.nextID {
			// untested: the raw responder answers in order
			return nil, fmt.Errorf("floor: reply to id %d, want %d", id, f.nextID)
		}
		lat[i] = time.Since(start)
	}
	return lat, nil
}

// conc pipelines n requests from workers goroutines over the one pipe: the
// floor for concurrent callers is a multiplexed connection, like the SDK's.
func (f *floorCaller) conc(_ context.Context, n, workers int) (time.Duration, error) {
	var (
		wmu     sync.Mutex
		pmu     sync.Mutex
		pending = map[int64]chan struct{}{}
		next    atomic.Int64
		base    = f.nextID
		wg      sync.WaitGroup
		werr    atomic.Pointer[error]
		rerr    error
		dead    = make(chan struct{}) // the reader stopped early
		buf     []byte                // guarded by wmu
	)
	readDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(readDone)
		for range n {
			id, err := f.readReply()
			if err == nil {
				pmu.Lock()
				ch := pending[id]
				delete(pending, id)
				pmu.Unlock()
				if ch != nil {
					close(ch)
					continue
				}
				err = fmt.Errorf("floor: reply to unknown id %d", id) // untested: the raw responder echoes ids
			}
			rerr = err
			close(dead)
			return
		}
	}()
	for range workers {
		wg.Go(func() {
			for {
				k := next.Add(1)
				if k > int64(n) {
					return
				}
				id := base + k
				ch := make(chan struct{})
				pmu.Lock()
				pending[id] = ch
				pmu.Unlock()
				wmu.Lock()
				buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
				buf = strconv.AppendInt(buf, id, 10)
				buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`+"\n"...)
				_, err := f.stdin.Write(buf)
				wmu.Unlock()
				if err != nil {
					// untested: only when the responder died mid-round
					werr.Store(&err)
					return
				}
				select {
				case <-ch:
				case <-dead:
					return
				}
			}
		})
	}
	wg.Wait()
	if p := werr.Load(); p != nil { // untested: see the write above
		// The reader waits for replies that will never come: stop it.
		f.stdin.Close()
		<-readDone
		return 0, fmt.Errorf("floor: writing a request: %w", *p)
	}
	<-readDone
	elapsed := time.Since(start)
	f.nextID = base + int64(n)
	if rerr != nil {
		return 0, rerr
	}
	return elapsed, nil
}

func (f *floorCaller) close() error {
	f.stdin.Close()
	if err := f.cmd.Wait(); err != nil {
		// untested: the responder exits 0 when its stdin closes
		return fmt.Errorf("floor: raw responder: %w", err)
	}
	return nil
}

// String names a child for error messages.
func (c childSpec) String() string {
	for _, k := range []string{"MCPTEST_CHILD", childEnv} {
		if v := c.env[k]; v != "" {
			return "the " + v + " child"
		}
	}
	return filepath.Base(c.exe)
}
