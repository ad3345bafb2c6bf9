package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// callVariant is one client × server combination of the call rows.
type callVariant struct {
	key    string // stable id the comparisons refer to
	server string
	client string
	start  func(ctx context.Context) (caller, error)
	inProc bool // the client runs in this process, so its allocations are counted

	c        caller
	lat      []time.Duration // every sequential latency
	roundP50 []time.Duration // p50 of each sequential round
	rates    []float64       // calls/s of each concurrent round
	cpu      time.Duration   // this process's CPU time during the sequential rounds
	mallocs  uint64          // heap allocations during the sequential rounds
	bytes    uint64          // heap bytes allocated during them
	calls    int             // sequential calls measured
	p50, p99 time.Duration   // of lat
}

// callComparison is one ratio of the call rows: a over b.
type callComparison struct {
	a, b    string // variant keys
	what    string
	target  float64 // p50 ratio goal, 0 for none
	stretch bool    // the target is the stretch goal
	// costTarget is a goal for the cost ratio at 64 callers, 0 for none.
	costTarget float64
}

// callResults is what the call rows measured.
type callResults struct {
	variants    []*callVariant
	comparisons []callComparison
	seqCalls    int
	rounds      int
	concCalls   int
	concRounds  int
	workers     int
	skipped     []string // variants not run, with the reason
}

func (r *callResults) variant(key string) *callVariant {
	for _, v := range r.variants {
		if v.key == key {
			return v
		}
	}
	return nil
}

// negotiating is s with its client negotiating its newest protocol.
func negotiating(s serveSetup) serveSetup {
	s.negotiate = true
	return s
}

// callVariants lists the variants of rows 1–3. node is nil when the peer
// client is skipped.
// keep selects variants by key (nil keeps all).
func callVariants(exe, responder, tbxark string, serve *serveSetup, node *nodeSetup, keep []string) []*callVariant {
	fx := fixtureChild(exe)
	raw := responderChild(responder, 0, 1)
	vs := []*callVariant{
		{key: "fx-sdk", server: "go-sdk fixture", client: "raw go-sdk", inProc: true,
			start: func(ctx context.Context) (caller, error) { return rawSDKCaller(ctx, fx, "") }},
		{key: "fx-bridge", server: "go-sdk fixture", client: "bridge", inProc: true,
			start: func(ctx context.Context) (caller, error) { return bridgeCaller(ctx, fx, "") }},
		{key: "fx-sdk-pin", server: "go-sdk fixture", client: "raw go-sdk, pinned", inProc: true,
			start: func(ctx context.Context) (caller, error) { return rawSDKCaller(ctx, fx, legacyVersion) }},
		{key: "fx-bridge-pin", server: "go-sdk fixture", client: "bridge, pinned", inProc: true,
			start: func(ctx context.Context) (caller, error) { return bridgeCaller(ctx, fx, legacyVersion) }},
		{key: "raw-sdk", server: "raw responder", client: "raw go-sdk", inProc: true,
			start: func(ctx context.Context) (caller, error) { return rawSDKCaller(ctx, raw, "") }},
		{key: "raw-bridge", server: "raw responder", client: "bridge", inProc: true,
			start: func(ctx context.Context) (caller, error) { return bridgeCaller(ctx, raw, "") }},
		{key: "floor", server: "raw responder", client: "pipe floor (no SDK)", inProc: true,
			start: func(context.Context) (caller, error) { return startFloor(raw, false) }},
		{key: "fx-floor", server: "go-sdk fixture", client: "pipe floor (no SDK)", inProc: true,
			start: func(context.Context) (caller, error) { return startFloor(fx, true) }},
		{key: "serve-stdio", server: "raw responder", client: "raw go-sdk → mcpbridge serve --stdio", inProc: true,
			start: func(ctx context.Context) (caller, error) { return serveCaller(ctx, *serve, false) }},
		{key: "serve-http", server: "raw responder", client: "raw go-sdk → mcpbridge serve --http", inProc: true,
			start: func(ctx context.Context) (caller, error) { return serveCaller(ctx, *serve, true) }},
		{key: "serve-http-new", server: "raw responder", client: "raw go-sdk, negotiated, offering roots → mcpbridge serve --http", inProc: true,
			start: func(ctx context.Context) (caller, error) { return serveCaller(ctx, negotiating(*serve), true) }},
		{key: "http-floor", server: "raw responder over HTTP", client: "raw go-sdk over HTTP (HTTP floor)", inProc: true,
			start: func(ctx context.Context) (caller, error) { return httpFloorCaller(ctx, responder) }},
		{key: "gw-stdio", server: "raw responder", client: "raw go-sdk → gateway (stdio) → bridge", inProc: true,
			start: func(ctx context.Context) (caller, error) { return gatewayCaller(ctx, raw, false) }},
		{key: "gw-http", server: "raw responder", client: "raw go-sdk → gateway (HTTP) → bridge", inProc: true,
			start: func(ctx context.Context) (caller, error) { return gatewayCaller(ctx, raw, true) }},
	}
	if node != nil {
		vs = append(vs, &callVariant{key: "fx-node", server: "go-sdk fixture", client: "Node TS SDK",
			start: func(context.Context) (caller, error) { return startNode(*node, fx) }})
		vs = append(vs, &callVariant{key: "raw-node", server: "raw responder", client: "Node TS SDK",
			start: func(context.Context) (caller, error) { return startNode(*node, raw) }})
		for i, peer := range peerGateways() {
			vs = append(vs, &callVariant{key: "peer-" + strconv.Itoa(i+1), server: "raw responder", client: "raw go-sdk → " + peer.name + " (Node)", inProc: true,
				start: func(ctx context.Context) (caller, error) { return peerCaller(ctx, *node, peer, raw) }})
		}
	}
	if serve.base != nil {
		vs = append(vs, &callVariant{key: "serve-http-base", server: "raw responder", client: "raw go-sdk → mcpbridge serve --http (-baseline build)", inProc: true,
			start: func(ctx context.Context) (caller, error) { return serveCaller(ctx, *serve.base, true) }},
			&callVariant{key: "serve-http-new-base", server: "raw responder", client: "raw go-sdk, negotiated, offering roots → mcpbridge serve --http (-baseline build)", inProc: true,
				start: func(ctx context.Context) (caller, error) { return serveCaller(ctx, negotiating(*serve.base), true) }})
	}
	if tbxark != "" {
		vs = append(vs, &callVariant{key: "peer-tbxark", server: "raw responder", client: "raw go-sdk → TBXark/mcp-proxy (Go)", inProc: true,
			start: func(ctx context.Context) (caller, error) { return tbxarkCaller(ctx, tbxark, filepath.Dir(tbxark), raw) }})
	}
	if keep != nil {
		vs = slices.DeleteFunc(vs, func(v *callVariant) bool { return !slices.Contains(keep, v.key) })
	}
	return vs
}

// variantKeys lists the keys of every call variant.
func variantKeys() []string {
	var keys []string
	for _, v := range callVariants("", "", "tbxark", &serveSetup{base: &serveSetup{}}, &nodeSetup{}, nil) {
		keys = append(keys, v.key)
	}
	return keys
}

// callComparisons are the ratios the call rows report, with the issue's
// targets.
func callComparisons() []callComparison {
	return []callComparison{
		{a: "fx-bridge", b: "fx-sdk", what: "bridge / raw go-sdk (go-sdk fixture, negotiated protocol)", target: 1.05},
		{a: "fx-bridge-pin", b: "fx-sdk-pin", what: "bridge / raw go-sdk (go-sdk fixture, pinned 2025-11-25)", target: 1.05},
		{a: "raw-bridge", b: "raw-sdk", what: "bridge / raw go-sdk (raw responder)", target: 1.05},
		{a: "fx-bridge", b: "fx-node", what: "bridge / Node TS SDK (go-sdk fixture, negotiated protocol)", target: 0.6},
		{a: "fx-bridge-pin", b: "fx-node", what: "bridge, pinned / Node TS SDK (go-sdk fixture, both 2025-11-25)", target: 0.6},
		{a: "raw-bridge", b: "raw-node", what: "bridge / Node TS SDK (raw responder)", target: 0.6},
		{a: "serve-stdio", b: "raw-node", what: "mcpbridge serve --stdio / Node TS SDK direct (raw responder), for reference"},
		{a: "fx-sdk", b: "fx-node", what: "raw go-sdk / Node TS SDK (go-sdk fixture), for reference"},
		{a: "fx-floor", b: "fx-node", what: "pipe floor / Node TS SDK (go-sdk fixture): the best any client can do"},
		{a: "fx-bridge-pin", b: "fx-floor", what: "bridge, pinned / pipe floor (go-sdk fixture)"},
		{a: "raw-bridge", b: "floor", what: "bridge / pipe floor (raw responder)", target: 3, stretch: true},
		{a: "raw-sdk", b: "floor", what: "raw go-sdk / pipe floor (raw responder), for reference"},
		// The goals, and the 64-caller cost of TBXark/mcp-proxy (Go),
		// which cannot be installed here: 1.9× a direct call.
		{a: "serve-stdio", b: "raw-sdk", what: "mcpbridge serve --stdio / direct raw go-sdk (raw responder)", target: 2, costTarget: 1.9},
		{a: "serve-http", b: "raw-sdk", what: "mcpbridge serve --http / direct raw go-sdk (raw responder)", target: 3, costTarget: 1.9},
		{a: "http-floor", b: "raw-sdk", what: "HTTP floor / direct raw go-sdk: the least HTTP adds, before any gateway"},
		{a: "serve-http", b: "http-floor", what: "mcpbridge serve --http / HTTP floor: what the gateway and its backend add"},
		{a: "serve-http", b: "peer-tbxark", what: "mcpbridge serve --http / TBXark/mcp-proxy (Go), the same responder", target: 1, costTarget: 1},
		{a: "serve-http-new", b: "serve-http", what: "mcpbridge serve --http: negotiated 2026-07-28 / pinned 2025-11-25"},
		{a: "serve-http", b: "serve-http-base", what: "mcpbridge serve --http / the same of the -baseline build"},
		{a: "serve-http-base", b: "peer-tbxark", what: "mcpbridge serve --http of the -baseline build / TBXark/mcp-proxy (Go)"},
		{a: "serve-http-new", b: "serve-http-new-base", what: "mcpbridge serve --http, negotiated 2026-07-28 / the same of the -baseline build"},
		{a: "gw-stdio", b: "raw-sdk", what: "gateway over stdio / direct raw go-sdk (raw responder)"},
		{a: "gw-http", b: "raw-sdk", what: "gateway over HTTP / direct raw go-sdk (raw responder)"},
		{a: "fx-bridge", b: "fx-bridge-pin", what: "bridge: negotiated 2026-07-28 / pinned 2025-11-25"},
		{a: "fx-sdk", b: "fx-sdk-pin", what: "raw go-sdk: negotiated 2026-07-28 / pinned 2025-11-25"},
	}
}

// runCalls measures rows 1–3: every variant connected at once, warmed up,
// then rounds of sequential calls and rounds of concurrent calls with the
// variants interleaved (the starting variant rotates each round), so that
// machine noise hits all of them alike.
func runCalls(ctx context.Context, o options, exe, responder string, serve *serveSetup, node *nodeSetup, logf func(string, ...any)) (res *callResults, err error) {
	res = &callResults{
		variants: callVariants(exe, responder, o.tbxark, serve, node, o.variants), comparisons: callComparisons(),
		seqCalls: o.seqCalls, rounds: o.rounds, concCalls: o.concCalls, concRounds: o.concRounds, workers: o.workers,
	}
	if node == nil {
		res.skipped = append(res.skipped, "Node TS SDK client: "+o.nodeSkipReason)
	}
	if o.tbxarkSkipReason != "" {
		res.skipped = append(res.skipped, o.tbxarkSkipReason)
	}
	defer func() {
		for _, v := range res.variants {
			if v.c != nil {
				if cerr := v.c.close(); cerr != nil {
					// untested: closing a healthy child fails only if it crashes
					err = errors.Join(err, fmt.Errorf("closing %s → %s: %w", v.client, v.server, cerr))
				}
			}
		}
	}()
	for _, v := range res.variants {
		logf("calls: connecting %s → %s", v.client, v.server)
		if v.c, err = v.start(ctx); err != nil {
			return res, fmt.Errorf("starting %s → %s: %w", v.client, v.server, err)
		}
		if _, err := v.c.seq(ctx, o.warmup); err != nil {
			// untested: a server that starts, then fails; the callers' checks are tested
			return res, fmt.Errorf("warming up %s → %s: %w", v.client, v.server, err)
		}
	}

	perRound := max(o.seqCalls/o.rounds, 1)
	var ms runtime.MemStats
	for r := range o.rounds {
		logf("calls: sequential round %d/%d", r+1, o.rounds)
		for i := range res.variants {
			v := res.variants[(i+r)%len(res.variants)]
			var before, beforeBytes uint64
			var cpuBefore time.Duration
			if v.inProc {
				runtime.ReadMemStats(&ms)
				before, beforeBytes = ms.Mallocs, ms.TotalAlloc
				cpuBefore = processCPU()
			}
			lat, err := v.c.seq(ctx, perRound)
			if err != nil {
				// untested: a server that answered the warm-up and then fails
				return res, fmt.Errorf("%s → %s: %w", v.client, v.server, err)
			}
			if v.inProc {
				v.cpu += processCPU() - cpuBefore
				runtime.ReadMemStats(&ms)
				v.mallocs += ms.Mallocs - before
				v.bytes += ms.TotalAlloc - beforeBytes
			}
			v.calls += len(lat)
			v.lat = append(v.lat, lat...)
			v.roundP50 = append(v.roundP50, percentile(slices.Clone(lat), 50))
		}
	}
	for r := range o.concRounds {
		logf("calls: concurrent round %d/%d (%d callers)", r+1, o.concRounds, o.workers)
		for i := range res.variants {
			v := res.variants[(i+r)%len(res.variants)]
			elapsed, err := v.c.conc(ctx, o.concCalls, o.workers)
			if err != nil {
				// untested: as above
				return res, fmt.Errorf("%s → %s, %d callers: %w", v.client, v.server, o.workers, err)
			}
			v.rates = append(v.rates, float64(o.concCalls)/elapsed.Seconds())
		}
	}
	for _, v := range res.variants {
		v.p50 = percentile(v.lat, 50)
		v.p99 = percentile(v.lat, 99)
	}
	return res, nil
}

// seqRatio returns the pooled p50 and p99 ratios of a over b and the
// interquartile range of the per-round p50 ratios.
func seqRatio(a, b *callVariant) (p50, p99, lo, hi float64) {
	var per []float64
	for i := range min(len(a.roundP50), len(b.roundP50)) {
		per = append(per, ratio(float64(a.roundP50[i]), float64(b.roundP50[i])))
	}
	lo, hi = quartiles(per)
	return ratio(float64(a.p50), float64(b.p50)), ratio(float64(a.p99), float64(b.p99)), lo, hi
}

// cpuPerCall is this process's CPU time per sequential call of v, 0 when
// not measured (another process, or no rusage).
func (v *callVariant) cpuPerCall() time.Duration {
	if !v.inProc || v.calls == 0 {
		return 0
	}
	return v.cpu / time.Duration(v.calls)
}

// rateRatio returns the cost ratio of a over b at concurrency (b's
// calls/s over a's, so below 1 means a is faster): the median and the
// interquartile range of the per-round ratios.
func rateRatio(a, b *callVariant) (med, lo, hi float64) {
	var per []float64
	for i := range min(len(a.rates), len(b.rates)) {
		per = append(per, ratio(b.rates[i], a.rates[i]))
	}
	lo, hi = quartiles(per)
	return median(per), lo, hi
}
