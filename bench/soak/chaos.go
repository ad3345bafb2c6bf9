package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// world is what the config file describes: stdio backends s0..sN-1 (this
// program re-executed as the go-sdk fixture server) and one Streamable HTTP
// backend, web, served by this process. s0 and web are always there; the
// others come, go and change with every rewrite.
type world struct {
	exe      string
	webURL   string
	backends int
	path     string
}

// serverNames are every backend the config may hold.
func (w world) serverNames() []string {
	names := []string{"web"}
	for i := range w.backends {
		names = append(names, fmt.Sprintf("s%d", i))
	}
	return names
}

// config is the composition file of generation gen: with rnd nil every
// backend, unchanged.
func (w world) config(gen int, rnd *rand.Rand) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "- id: web\n  name: mcp-client\n  config:\n    serverName: web\n    transport: streamable-http\n    url: %s\n", w.webURL)
	for i := range w.backends {
		variant := 0
		if rnd != nil && i > 0 {
			if rnd.IntN(10) < 3 {
				continue // removed this time
			}
			if rnd.IntN(10) < 3 {
				variant = gen // changed: a new instance takes over
			}
		}
		fmt.Fprintf(&b, "- id: s%d\n  name: mcp-client\n  config:\n    serverName: s%d\n    transport: stdio\n    command: %q\n"+
			"    env: {%s: fixture, SOAK_VARIANT: %q}\n    reconnect: {enabled: true, initialDelayMs: 100, maxDelayMs: 1000, maxAttempts: 1000}\n",
			i, i, w.exe, mcppeer.ChildEnv, fmt.Sprint(variant))
	}
	return []byte(b.String())
}

func (w world) write(gen int, rnd *rand.Rand) error {
	return atomicfile.Write(w.path, w.config(gen, rnd), 0o600)
}

// serveWeb serves the fixture over Streamable HTTP on a loopback port
// until the returned stop is called.
func serveWeb() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("the HTTP backend: %w", err)
	}
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		hs.Serve(ln)
	}()
	return "http://" + ln.Addr().String() + "/mcp", func() { hs.Close(); <-done }, nil
}

// chaos counts what the reloader and the killer did; and every process
// seen below serve, to look for survivors at the end.
type chaos struct {
	mu      sync.Mutex
	writes  int           // guarded by mu
	kills   int           // guarded by mu
	seen    map[proc]bool // guarded by mu
	scanErr error         // the first /proc error; guarded by mu
}

// reload rewrites the config every interval until ctx ends.
func (c *chaos) reload(ctx context.Context, w world, every time.Duration, rnd *rand.Rand) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for gen := 1; ; gen++ {
		select {
		case <-ctx.Done():
			return w.write(0, nil) // every backend back, for the idle phase
		case <-t.C:
		}
		if err := w.write(gen, rnd); err != nil {
			return fmt.Errorf("rewriting the config: %w", err)
		}
		c.mu.Lock()
		c.writes++
		c.mu.Unlock()
	}
}

// kill sends SIGKILL to a random child of serve every interval until ctx
// ends.
func (c *chaos) kill(ctx context.Context, servePid int, every time.Duration, rnd *rand.Rand) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		kids := c.note(servePid)
		if len(kids) == 0 {
			continue
		}
		victim := kids[rnd.IntN(len(kids))]
		if alive(victim) && syscall.Kill(victim.pid, syscall.SIGKILL) == nil {
			c.mu.Lock()
			c.kills++
			c.mu.Unlock()
		}
	}
}

// note records the processes below serve and returns them.
func (c *chaos) note(servePid int) []proc {
	procs, err := descendants(servePid)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && c.scanErr == nil {
		c.scanErr = err
	}
	if c.seen == nil {
		c.seen = make(map[proc]bool)
	}
	for _, p := range procs {
		c.seen[p] = true
	}
	return procs
}

// survivors are the processes ever seen below serve that still run.
func (c *chaos) survivors() ([]proc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []proc
	for p := range c.seen {
		if alive(p) {
			out = append(out, p)
		}
	}
	return out, c.scanErr
}

// watch notes serve's processes every interval until ctx ends, so that
// those born and reloaded away between two kills are looked for too.
func (c *chaos) watch(ctx context.Context, servePid int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		c.note(servePid)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
