package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// startupResults is what row 4 measured: for each server count, the time
// until every server's tools were available, per round.
type startupResults struct {
	counts []int
	rounds int
	delay  time.Duration
	tools  int
	bridge map[int][]time.Duration
	host   map[int][]time.Duration
	raw    map[int][]time.Duration
	floor  map[int][]time.Duration
}

// runStartup measures row 4: n slow-initializing stdio servers started at
// once, through the bridge (one mcpclient.Start per server), through the
// host (one composition file applied), through raw go-sdk sessions
// connected in parallel, and as bare processes spoken to without an SDK
// (the floor), rounds interleaved.
func runStartup(ctx context.Context, o options, responder string, logf func(string, ...any)) (*startupResults, error) {
	res := &startupResults{
		counts: o.servers, rounds: o.startupRounds, delay: o.initDelay, tools: o.startupTools,
		bridge: map[int][]time.Duration{}, host: map[int][]time.Duration{}, raw: map[int][]time.Duration{}, floor: map[int][]time.Duration{},
	}
	spec := responderChild(responder, o.initDelay, o.startupTools)
	for r := range o.startupRounds {
		for _, n := range o.servers {
			logf("startup: round %d/%d, %d servers", r+1, o.startupRounds, n)
			// Rotate which variant goes first, so none always meets the
			// others' leftovers (exiting children, garbage).
			for i := range 4 {
				var (
					d    time.Duration
					err  error
					into map[int][]time.Duration
					what string
				)
				switch (i + r) % 4 {
				case 0:
					d, err = bridgeStartup(ctx, spec, n, o.startupTools)
					into, what = res.bridge, "bridge"
				case 1:
					d, err = hostStartup(ctx, spec, n, o.startupTools)
					into, what = res.host, "host"
				case 2:
					d, err = rawStartup(ctx, spec, n, o.startupTools)
					into, what = res.raw, "raw go-sdk"
				default:
					d, err = floorStartup(spec, n, o.startupTools)
					into, what = res.floor, "process floor"
				}
				if err != nil {
					return res, fmt.Errorf("%s startup of %d servers: %w", what, n, err)
				}
				into[n] = append(into[n], d)
			}
		}
	}
	return res, nil
}

// bridgeStartup starts n bridge servers into one registry and returns the
// time until all of them were ready with every tool registered.
func bridgeStartup(ctx context.Context, spec childSpec, n, tools int) (elapsed time.Duration, err error) {
	reg := tool.NewRegistry()
	env := cleanEnviron()
	servers := make([]*mcpclient.Server, 0, n)
	defer func() {
		closers := make([]func() error, len(servers))
		for i, s := range servers {
			closers[i] = s.Close
		}
		err = errors.Join(err, closeAll(closers))
	}()
	start := time.Now()
	for i := range n {
		s, err := mcpclient.Start(bridgeConfig("s"+strconv.Itoa(i), spec, ""), mcpclient.Options{Registry: reg, Environ: env})
		if err != nil {
			return 0, fmt.Errorf("starting server %d: %w", i, err) // untested: the config is valid
		}
		servers = append(servers, s)
	}
	for i, s := range servers {
		if err := s.WaitReady(ctx); err != nil {
			return 0, fmt.Errorf("server %d: %w", i, err)
		}
	}
	elapsed = time.Since(start)
	if got := reg.Len(); got != n*tools {
		return 0, fmt.Errorf("%d tools registered, want %d", got, n*tools)
	}
	return elapsed, nil
}

// rawStartup connects n raw go-sdk sessions in parallel and lists their
// tools, returning the time until the last list arrived.
func rawStartup(ctx context.Context, spec childSpec, n, tools int) (elapsed time.Duration, err error) {
	sessions := make([]*mcp.ClientSession, n)
	errs := make([]error, n)
	defer func() {
		var closers []func() error
		for _, s := range sessions {
			if s != nil {
				closers = append(closers, s.Close)
			}
		}
		err = errors.Join(err, closeAll(closers))
	}()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			s, err := dialSDK(ctx, spec, "")
			if err != nil {
				errs[i] = err
				return
			}
			sessions[i] = s
			res, err := s.ListTools(ctx, nil)
			if err != nil {
				errs[i] = fmt.Errorf("listing tools: %w", err) // untested: the responder always lists
			} else if len(res.Tools) != tools {
				errs[i] = fmt.Errorf("%d tools listed, want %d", len(res.Tools), tools)
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// floorStartup is the process floor of startup: n children spawned at once,
// each sent initialize and tools/list as bare JSON-RPC lines (no SDK, no
// discover probe), until the last list arrived. What it takes is the
// machine's, not any client's.
func floorStartup(spec childSpec, n, tools int) (time.Duration, error) {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	var end time.Time
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			errs[i] = floorHandshake(spec, tools, func() {
				mu.Lock()
				end = time.Now()
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return end.Sub(start), nil
}

// floorHandshake starts one child, initializes it, lists its tools, calls
// listed, then stops the child.
func floorHandshake(spec childSpec, tools int, listed func()) error {
	cmd := spec.command()
	stdin, stdout, err := startPiped(cmd, "process floor")
	if err != nil {
		return err
	}
	br := bufio.NewReader(stdout)
	exchange := func(req string) ([]byte, error) {
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			return nil, err // untested: a server that died before reading; the read reports it too
		}
		return br.ReadBytes('\n')
	}
	_, err = exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`)
	if err == nil {
		_, err = io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	}
	var list []byte
	if err == nil {
		list, err = exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	}
	if err == nil {
		listed()
		if got := bytes.Count(list, []byte(`"inputSchema"`)); got != tools {
			err = fmt.Errorf("%d tools listed, want %d", got, tools)
		}
	}
	stdin.Close()
	return errors.Join(err, cmd.Wait())
}

// closeAll runs the closers in parallel (each may wait for a child to
// exit) and joins their errors.
func closeAll(closers []func() error) error {
	errs := make([]error, len(closers))
	var wg sync.WaitGroup
	for i, c := range closers {
		wg.Go(func() { errs[i] = c() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
