package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// result is what a soak measured.
type result struct {
	elapsed                    time.Duration
	tally                      *tally
	writes, kills              int
	reloads, applied, warnings int
	start, peak, held, end     gauges
	closed                     gauges // with -long-sessions: once the sessions closed, after end
	ended                      int    // abandoned sessions the soak ended with a DELETE
	kept                       int    // long sessions held open through the idle
	stopTook                   time.Duration
	stopErr                    error
	survivors                  []proc
	scanErr                    error
	serveTail                  string
}

// soak runs one soak as o says.
func soak(ctx context.Context, o options, logf func(string, ...any)) (*result, error) {
	dir, err := os.MkdirTemp("", "mcpbridge-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	prog, err := mcpbridgeProgram(o.mcpbridge, dir)
	if err != nil {
		return nil, err
	}
	pr := newProfiler(o.profileDir, dir)
	prog.env = append(prog.env, pr.env()...)
	webURL, stopWeb, err := serveWeb()
	if err != nil {
		return nil, err
	}
	defer stopWeb()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	w := world{exe: exe, webURL: webURL, backends: o.backends, path: filepath.Join(dir, "soak.yaml")}
	if err := w.write(0, nil); err != nil {
		return nil, err
	}
	p, err := startServe(ctx, prog, w.path)
	if err != nil {
		return nil, err
	}
	res, err := drive(ctx, o, w, p, pr, logf)
	if err != nil {
		p.kill()
		return nil, err
	}
	return res, nil
}

// drive warms serve up, loads it, lets it idle and stops it.
func drive(ctx context.Context, o options, w world, p *serveProc, pr profiler, logf func(string, ...any)) (*result, error) {
	if err := awaitTools(ctx, p, w.serverNames()); err != nil {
		return nil, err
	}
	var err error
	res := &result{tally: newTally()}
	if res.start, err = lowest(ctx, p.metricsURL, 2*time.Second, 250*time.Millisecond); err != nil {
		return nil, err
	}
	if err := pr.take(ctx, "start"); err != nil {
		return nil, err
	}
	logf("serve is up (%s); heap %s; %d clients for %v", p.mcpURL, mib(res.start.heap), o.clients, o.duration)
	began := time.Now()
	var ch chaos
	long, err := load(ctx, o, w, p, res, &ch, logf)
	// The long sessions stay open through the idle: what serve keeps for
	// a session that lives on is what the heap after idle measures.
	defer func() { closeAll(long) }() // on an error; else once measured
	if err != nil {
		return nil, err
	}
	res.elapsed = time.Since(began)
	// What the sessions abandoned without a DELETE hold, until the
	// gateway's session timeout; then what is left once they are ended.
	if res.held, err = lowest(ctx, p.metricsURL, 3*time.Second, 500*time.Millisecond); err != nil {
		return nil, err
	}
	if err := pr.take(ctx, "load"); err != nil {
		return nil, err
	}
	if res.ended, err = endSessions(ctx, p, res.tally.abandoned); err != nil {
		return nil, err
	}
	logf("load over after %v; %d abandoned sessions ended; idling %v", res.elapsed.Round(time.Second), res.ended, o.idle)
	if res.end, err = lowest(ctx, p.metricsURL, o.idle, time.Second); err != nil {
		return nil, err
	}
	if err := pr.take(ctx, "idle"); err != nil {
		return nil, err
	}
	if res.kept = len(long); res.kept > 0 {
		closeAll(long)
		long = nil
		// Whether what the sessions held went with them.
		if res.closed, err = lowest(ctx, p.metricsURL, 3*time.Second, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
	res.peak.heap = max(res.peak.heap, res.start.heap, res.held.heap, res.end.heap)
	ch.note(p.cmd.Process.Pid)
	res.stopTook, res.stopErr = p.stop(o.grace)
	res.survivors, res.scanErr = awaitGone(&ch)
	res.writes, res.kills = ch.writes, ch.kills
	res.reloads, res.applied, res.warnings, res.serveTail = p.log.counts()
	return res, nil
}

// load runs the clients and the chaos for o.duration. With
// -long-sessions it returns the clients, their sessions still open.
func load(ctx context.Context, o options, w world, p *serveProc, res *result, ch *chaos, logf func(string, ...any)) ([]*longClient, error) {
	loadCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	var wg sync.WaitGroup
	var reloadErr error
	servePid := p.cmd.Process.Pid
	wg.Go(func() { reloadErr = ch.reload(loadCtx, w, o.reloadEvery, rand.New(rand.NewPCG(seed, 1))) })
	wg.Go(func() { ch.kill(loadCtx, servePid, o.killEvery, rand.New(rand.NewPCG(seed, 2))) })
	wg.Go(func() { ch.watch(loadCtx, servePid, 500*time.Millisecond) })
	wg.Go(func() { res.peak = follow(loadCtx, p.metricsURL, res.tally, logf) })
	var long []*longClient
	if o.longSessions {
		long = longClients(o, w, p, res.tally, seed)
		for _, c := range long {
			wg.Go(func() { c.run(loadCtx) })
		}
	} else {
		for i := range o.clients {
			c := &client{url: p.mcpURL, token: p.token, servers: w.serverNames(), hangBound: o.hangBound, slow: o.slow,
				tally: res.tally, rnd: rand.New(rand.NewPCG(seed, uint64(10+i)))}
			wg.Go(func() { c.run(loadCtx) })
		}
	}
	wg.Wait()
	return long, reloadErr
}

// follow scrapes serve every few seconds during the load, logs progress,
// and returns the highest heap seen.
func follow(ctx context.Context, url string, t *tally, logf func(string, ...any)) gauges {
	var peak gauges
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	lastLog := time.Now()
	for {
		select {
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
		g, err := scrape(ctx, url)
		if err != nil {
			continue // the load's end may cut a scrape
		}
		if g.heap > peak.heap {
			peak = g
		}
		if time.Since(lastLog) >= 30*time.Second {
			lastLog = time.Now()
			made, ok := t.totals()
			logf("%d operations, %d ok; heap %s, %0.f goroutines, %0.f sessions", made, ok, mib(g.heap), g.goroutines, g.sessions)
		}
	}
}

// awaitTools connects once and lists until every server's echo is there.
func awaitTools(ctx context.Context, p *serveProc, servers []string) error {
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.mcpURL, HTTPClient: &http.Client{Transport: bearer{p.token, http.DefaultTransport}}}, nil)
	if err != nil {
		return fmt.Errorf("connecting to serve: %w", err)
	}
	defer sess.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		missing, err := missingTools(ctx, sess, servers)
		switch {
		case err != nil:
			return fmt.Errorf("listing serve's tools: %w", err)
		case len(missing) == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("serve did not list %v within 60s", missing)
		}
		pause(ctx, 100*time.Millisecond) // a poll interval: the servers connect on their own
	}
}

func missingTools(ctx context.Context, sess *mcp.ClientSession, servers []string) ([]string, error) {
	have := make(map[string]bool)
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		have[t.Name] = true
	}
	var missing []string
	for _, s := range servers {
		if name := mcpclient.PublicToolName(s, "echo"); !have[name] {
			missing = append(missing, name)
		}
	}
	return missing, nil
}

// awaitGone gives the processes serve started a moment to be reaped by the
// kernel after serve exited, and returns those still running.
func awaitGone(ch *chaos) ([]proc, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		left, err := ch.survivors()
		if len(left) == 0 || err != nil || time.Now().After(deadline) {
			return left, err
		}
		time.Sleep(50 * time.Millisecond) // a poll interval: nothing signals a stranger's death
	}
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

// endSessions sends the DELETE the abandoned sessions never sent, and
// returns how many serve still held.
func endSessions(ctx context.Context, p *serveProc, ids []string) (int, error) {
	ended := 0
	for _, id := range ids {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, p.mcpURL, nil)
		if err != nil {
			return ended, err
		}
		req.Header.Set("Authorization", "Bearer "+p.token)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ended, fmt.Errorf("ending an abandoned session: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			ended++
		}
	}
	return ended, nil
}
