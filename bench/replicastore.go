package main

import (
	"bufio"
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
	"time"
)

// storeReplicas is how many replicas the store variant of the replicas
// row runs, with and without the store.
const storeReplicas = 3

// storeLimit is the gateway entry of both sides of the store variant: a
// rate limit no call reaches, so that every call takes a token (from the
// replica's own buckets, or from the store's), and none is refused.
const storeLimit = "- id: gw\n  name: gateway\n  config:\n    rateLimit: {perIdentity: 1000000/s, burst: 1000000}\n"

// storeResults are the figures of the store variant: rates and CPU per
// call, one per round, of the replicas without the store and with it.
type storeResults struct {
	rates                   [2][]float64
	serveCPU                [2][]time.Duration // the serve processes', per call
	redisCPU                []time.Duration    // redis-server's, per call of the store side
	storeCalls              []float64          // the store calls the serve processes made, per call of the store side
	calls, rounds, sessions int
}

// runReplicaStore measures storeReplicas stateless replicas whose
// gateway entry keeps its rate limit in each process, against as many
// whose limit is shared in a redis-server (started here), the two sides'
// rounds interleaved: what the store costs a call.
func runReplicaStore(ctx context.Context, o options, s serveSetup, dir string, logf func(string, ...any)) (res *storeResults, err error) {
	res = &storeResults{calls: o.replicaCalls, rounds: o.replicaRounds, sessions: o.workers}
	redis, url, err := startRedis(ctx, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, stopProcess(redis)) }()
	var sets [2]*replicaSet
	defer func() {
		for _, set := range sets {
			if set != nil {
				err = errors.Join(err, set.close())
			}
		}
	}()
	for i, gateway := range []string{storeLimit, storeLimit + fmt.Sprintf("    store: {redis: {url: %q, keyPrefix: \"bench:\"}}\n", url)} {
		side, err := withGateway(s, dir, i, gateway)
		if err != nil {
			return res, err
		}
		logf("replicas: starting %d serve --http --stateless processes, store %v", storeReplicas, i == 1)
		sets[i], err = startReplicaSet(ctx, side, storeReplicas, o.workers)
		if err != nil {
			return res, fmt.Errorf("%d replicas (store %v): %w", storeReplicas, i == 1, err)
		}
		if _, err := sets[i].run(ctx, o.warmup); err != nil {
			return res, fmt.Errorf("%d replicas (store %v): warming up: %w", storeReplicas, i == 1, err)
		}
	}
	for r := range o.replicaRounds {
		logf("replicas: store variant, round %d/%d", r+1, o.replicaRounds)
		for k := range 2 {
			i := (k + r) % 2
			serveBefore, redisBefore, storeBefore := sets[i].cpu(), procCPU(redis.Process.Pid), sets[i].storeCalls(ctx)
			elapsed, err := sets[i].run(ctx, o.replicaCalls)
			if err != nil {
				return res, fmt.Errorf("%d replicas (store %v): %w", storeReplicas, i == 1, err)
			}
			calls := time.Duration(o.replicaCalls)
			res.rates[i] = append(res.rates[i], float64(o.replicaCalls)/elapsed.Seconds())
			res.serveCPU[i] = append(res.serveCPU[i], (sets[i].cpu()-serveBefore)/calls)
			if i == 1 {
				res.redisCPU = append(res.redisCPU, (procCPU(redis.Process.Pid)-redisBefore)/calls)
				res.storeCalls = append(res.storeCalls, (sets[i].storeCalls(ctx)-storeBefore)/float64(o.replicaCalls))
			}
		}
	}
	return res, nil
}

// withGateway is s with gateway (a gateway entry) added to its config,
// written in dir under a name of side's.
func withGateway(s serveSetup, dir string, side int, gateway string) (serveSetup, error) {
	base, err := os.ReadFile(s.config)
	if err != nil {
		return s, fmt.Errorf("reading the serve config: %w", err) // untested: serveConfig just wrote it
	}
	s.config = filepath.Join(dir, fmt.Sprintf("serve-store-%d.yaml", side))
	if err := os.WriteFile(s.config, append(base, gateway...), 0o600); err != nil {
		return s, fmt.Errorf("writing the serve config: %w", err) // untested: dir was just created
	}
	return s, nil
}

// startRedis starts a redis-server on a free loopback port, keeping
// nothing on disk, and returns it and its URL once it answers PING.
func startRedis(ctx context.Context, dir string) (*exec.Cmd, string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", fmt.Errorf("the store variant of the replicas row needs redis-server (Debian: apt-get install redis-server): %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("redis-server: finding a free port: %w", err) // untested: loopback listening fails only without ports
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Env = cleanEnviron()
	out := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting %s: %w", bin, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !pings(addr) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, "", errors.Join(fmt.Errorf("redis-server on %s did not answer PING within 10s (output: %s)", addr, out), stopProcess(cmd))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, "redis://" + addr, nil
}

// pings reports whether a Redis server at addr answers PING.
func pings(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// storeCalls is how many calls of the store the set's serve processes
// counted (mcpbridge_store_calls_total of their /metrics), 0 for those
// that do not tell.
func (set *replicaSet) storeCalls(ctx context.Context) float64 {
	var n float64
	for _, addr := range set.addrs {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue // untested: a replica that stopped answering fails the run's calls first
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "mcpbridge_store_calls_total{") {
				v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
				n += v
			}
		}
		resp.Body.Close()
	}
	return n
}

// storeTable renders the store variant of the replicas row.
func storeTable(o options, r *storeResults) table {
	t := table{
		title:   fmt.Sprintf("Row 8, store variant: %d stateless replicas with the store (redis-server) and without", storeReplicas),
		command: o.command("replicas"),
		header:  []string{"replicas", "calls/s (median)", "ratio to no store", "serve processes' CPU / call", "redis-server CPU / call", "store calls / call", "CPU the store adds / call"},
		notes: []string{
			fmt.Sprintf("Both sides: %d `mcpbridge serve --http --stateless` processes behind the round-robin balancer of row 8, %d go-sdk client sessions calling mcp__bench__echo in turn, %d calls a round, %d rounds interleaved between the sides. Each side's gateway entry limits every identity (1000000/s, never reached), so every call takes a token: without the store from the replica's own buckets, with it from one shared bucket in a local redis-server (one script call, a round trip, per call).", storeReplicas, r.sessions, r.calls, r.rounds),
			"CPU the store adds is the serve processes' CPU per call with the store, less without, plus redis-server's. Redis here shares the two cores with everything else; on its own node its CPU is not the replicas'.",
		},
	}
	none := median(r.rates[0])
	noneCPU := medianDur(r.serveCPU[0])
	for i, name := range []string{"no store", "store"} {
		rate, cpu := median(r.rates[i]), medianDur(r.serveCPU[i])
		redis, commands, added := "–", "–", "–"
		if i == 1 {
			rc := medianDur(r.redisCPU)
			redis, commands, added = fmtDur(rc), strconv.FormatFloat(median(r.storeCalls), 'f', 2, 64), fmtDur(cpu-noneCPU+rc)
		}
		t.rows = append(t.rows, []string{strconv.Itoa(storeReplicas) + ", " + name, fmtRate(rate), fmtRatio(ratio(rate, none)), fmtDur(cpu), redis, commands, added})
	}
	return t
}
