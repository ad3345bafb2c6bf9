package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// statelessVersion is the protocol whose clients stateless replicas serve
// with no affinity.
const statelessVersion = "2026-07-28"

// replicaResults are the replicas row's figures, by replica count.
type replicaResults struct {
	counts                  []int
	rates                   map[int][]float64       // calls/s, one per round
	driverCPU, replicaCPU   map[int][]time.Duration // per call: this process (clients, balancer); the serve processes
	calls, rounds, sessions int
}

// replicaSet is n `serve --http --stateless` processes behind one
// round-robin balancer in this process, and the client sessions that call
// through it.
type replicaSet struct {
	n        int
	procs    []*exec.Cmd
	addrs    []string // the serve processes' host:port
	balancer *http.Server
	callers  []*goCaller
}

// runReplicas measures calls/s through 1, 2, 4… stateless replicas behind
// a plain round-robin balancer, the counts' rounds interleaved. Every
// replica has its own responder child; o.workers client sessions (protocol
// 2026-07-28) each call sequentially.
func runReplicas(ctx context.Context, o options, s serveSetup, logf func(string, ...any)) (res *replicaResults, err error) {
	res = &replicaResults{counts: o.replicas, rates: map[int][]float64{}, driverCPU: map[int][]time.Duration{},
		replicaCPU: map[int][]time.Duration{}, calls: o.replicaCalls, rounds: o.replicaRounds, sessions: o.workers}
	var sets []*replicaSet
	defer func() {
		for _, set := range sets {
			err = errors.Join(err, set.close())
		}
	}()
	for _, n := range o.replicas {
		logf("replicas: starting %d serve --http --stateless process(es)", n)
		set, err := startReplicaSet(ctx, s, n, o.workers)
		if set != nil {
			sets = append(sets, set)
		}
		if err != nil {
			return res, fmt.Errorf("%d replicas: %w", n, err)
		}
		if _, err := set.run(ctx, o.warmup); err != nil {
			return res, fmt.Errorf("%d replicas: warming up: %w", n, err)
		}
	}
	for r := range o.replicaRounds {
		logf("replicas: round %d/%d", r+1, o.replicaRounds)
		for i := range sets {
			set := sets[(i+r)%len(sets)]
			cpuBefore, replicasBefore := processCPU(), set.cpu()
			elapsed, err := set.run(ctx, o.replicaCalls)
			if err != nil {
				return res, fmt.Errorf("%d replicas: %w", set.n, err)
			}
			res.rates[set.n] = append(res.rates[set.n], float64(o.replicaCalls)/elapsed.Seconds())
			res.driverCPU[set.n] = append(res.driverCPU[set.n], (processCPU()-cpuBefore)/time.Duration(o.replicaCalls))
			res.replicaCPU[set.n] = append(res.replicaCPU[set.n], (set.cpu()-replicasBefore)/time.Duration(o.replicaCalls))
		}
	}
	return res, nil
}

// startReplicaSet starts n replicas, their balancer, and sessions client
// sessions through it. On error the set returned (if any) holds what
// started, for close.
func startReplicaSet(ctx context.Context, s serveSetup, n, sessions int) (*replicaSet, error) {
	set := &replicaSet{n: n}
	var backends []*url.URL
	for range n {
		addr, proc, err := startServeHTTP(ctx, s, "--stateless")
		if err != nil {
			return set, err
		}
		set.procs, set.addrs = append(set.procs, proc), append(set.addrs, addr)
		backends = append(backends, &url.URL{Scheme: "http", Host: addr, Path: "/mcp"})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return set, fmt.Errorf("the balancer: %w", err) // untested: loopback listening fails only without ports
	}
	set.balancer = &http.Server{Handler: roundRobin(backends), ReadHeaderTimeout: 10 * time.Second}
	go set.balancer.Serve(ln)
	endpoint := "http://" + ln.Addr().String() + "/mcp"
	name := mcpclient.PublicToolName("bench", "echo")
	for i := range sessions {
		sess, err := newSDKClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
		if err != nil {
			return set, fmt.Errorf("connecting through the balancer: %w", err)
		}
		c := &goCaller{call: echoThrough(sess, name), version: sess.InitializeResult().ProtocolVersion, closer: sess.Close}
		set.callers = append(set.callers, c)
		if c.version != statelessVersion {
			return set, fmt.Errorf("the client negotiated %s, not %s", c.version, statelessVersion)
		}
		if i == 0 {
			// serve answers before its servers are connected; their tools follow.
			if err := awaitTool(ctx, sess, name, 30*time.Second); err != nil {
				return set, err
			}
		}
	}
	return set, nil
}

// echoThrough is a call of the gateway's echo tool on sess.
func echoThrough(sess *mcp.ClientSession, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: echoArgs})
		if err != nil {
			return err
		}
		if tc, ok := firstText(res); !ok || tc != echoText || res.IsError {
			return fmt.Errorf("echo through the balancer returned %+v, want text %q", res.Content, echoText)
		}
		return nil
	}
}

// roundRobin is a plain balancer: each request goes to the next backend,
// with no affinity.
func roundRobin(backends []*url.URL) http.Handler {
	var next atomic.Uint64
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := backends[next.Add(1)%uint64(len(backends))]
			pr.SetURL(target)
			pr.Out.URL.Path = target.Path
			pr.Out.Host = target.Host // serve checks Host against loopback
		},
		FlushInterval: -1,
		// A listen stream cut as its client leaves is no failure of the run.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// run makes calls calls, spread over the set's sessions, each calling
// sequentially, and returns how long they took.
func (set *replicaSet) run(ctx context.Context, calls int) (time.Duration, error) {
	var next atomic.Int64
	errs := make(chan error, len(set.callers))
	start := time.Now()
	for _, c := range set.callers {
		go func() {
			for next.Add(1) <= int64(calls) {
				if err := c.call(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range set.callers {
		err = errors.Join(err, <-errs)
	}
	return time.Since(start), err
}

// cpu is the CPU time the set's serve processes have used (not their
// responder children's).
func (set *replicaSet) cpu() time.Duration {
	var total time.Duration
	for _, p := range set.procs {
		total += procCPU(p.Process.Pid)
	}
	return total
}

// procCPU reads a process's user plus system CPU time from /proc (clock
// ticks of 10 ms); 0 when it cannot.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0 // untested: only off Linux, or for a process gone
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0 // untested: a /proc format this code does not know
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func (set *replicaSet) close() error {
	var err error
	for _, c := range set.callers {
		err = errors.Join(err, c.close())
	}
	if set.balancer != nil {
		err = errors.Join(err, set.balancer.Close())
	}
	for _, p := range set.procs {
		err = errors.Join(err, stopProcess(p))
	}
	return err
}

// replicasTable renders the replicas row.
func replicasTable(o options, r *replicaResults) table {
	t := table{
		title:   "Row 8: stateless replicas behind a round-robin balancer",
		command: o.command("replicas"),
		header:  []string{"replicas", "calls/s (median)", "ratio to 1 replica", "client + balancer CPU / call", "serve processes' CPU / call", "cores busy (both)"},
		notes: []string{
			fmt.Sprintf("%d go-sdk client sessions (protocol %s, no session id) each call mcp__bench__echo in turn, %d calls a round, %d rounds interleaved across the replica counts; the balancer is an httputil.ReverseProxy in the driver sending each request to the next replica; every replica is a `mcpbridge serve --http --stateless` process with its own responder child.", r.sessions, statelessVersion, r.calls, r.rounds),
			"What bounds it: one 2-core machine, shared with the clients, the balancer, every replica and its responder (and, on this machine, other people's work: see the load average above). Cores busy is the driver's and the serve processes' CPU per call times the calls/s; the responders and the kernel take the rest. More replicas add processes, not cores, so the figure stays about flat: it shows that stateless replicas need nothing from each other, not how far they scale. On separate nodes each replica brings its own cores, and the serve CPU per call is what one replica's core buys.",
		},
	}
	one := median(r.rates[r.counts[0]])
	for _, n := range r.counts {
		rate := median(r.rates[n])
		driver, serve := medianDur(r.driverCPU[n]), medianDur(r.replicaCPU[n])
		t.rows = append(t.rows, []string{strconv.Itoa(n), fmtRate(rate), fmtRatio(ratio(rate, one)),
			fmtDur(driver), fmtDur(serve), strconv.FormatFloat((driver+serve).Seconds()*rate, 'f', 2, 64)})
	}
	return t
}

// parseReplicas reads -replicas: ascending positive counts.
func parseReplicas(s string) ([]int, error) {
	out, err := parseServers(s)
	if err != nil || !slices.IsSorted(out) {
		return out, fmt.Errorf("-replicas: %q is not a list of ascending replica counts", s)
	}
	return out, nil
}
