package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// The protocol revisions the clients speak: 2025-11-25 opens a session
// (Mcp-Session-Id, a GET stream); 2026-07-28 has none.
var versions = []string{"2025-11-25", "2026-07-28"}

// counts are one kind of operation's figures.
type counts struct {
	made, ok, failed, wrong, hangs int
	slowest                        time.Duration
}

// tally collects the clients' figures. Safe for concurrent use.
type tally struct {
	mu     sync.Mutex
	kinds  map[string]*counts // guarded by mu
	errs   map[string]int     // error text → count, at most maxErrs texts; guarded by mu
	hangAt []string           // the first hangs, for the report; guarded by mu
	// abandoned are the ids of the sessions left without a DELETE, for
	// the soak to end once it has measured what they hold; guarded by mu
	abandoned []string
}

// abandon notes a session left without a DELETE ("" has no session).
func (t *tally) abandon(id string) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.abandoned = append(t.abandoned, id)
}

const maxErrs = 40

func newTally() *tally { return &tally{kinds: make(map[string]*counts), errs: make(map[string]int)} }

// outcome is how an operation ended.
type outcome int

const (
	okay outcome = iota
	failed
	wrong // an answer other than the one asked for
)

func (t *tally) record(kind string, took, hangBound time.Duration, how outcome, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.kinds[kind]
	if c == nil {
		c = &counts{}
		t.kinds[kind] = c
	}
	c.made++
	c.slowest = max(c.slowest, took)
	switch how {
	case okay:
		c.ok++
	case failed:
		c.failed++
	case wrong:
		c.wrong++
	}
	if took >= hangBound {
		c.hangs++
		if len(t.hangAt) < 10 {
			t.hangAt = append(t.hangAt, fmt.Sprintf("%s took %v: %v", kind, took.Round(time.Millisecond), err))
		}
	}
	if err != nil {
		msg := kind + ": " + err.Error()
		if len(msg) > 140 {
			msg = msg[:140] + "…"
		}
		if _, ok := t.errs[msg]; ok || len(t.errs) < maxErrs {
			t.errs[msg]++
		} else {
			t.errs["(other errors)"]++
		}
	}
}

// cutter dials a client's connections and can cut them all at once: an
// abrupt disconnect, no DELETE of the session reaching serve.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn // guarded by mu
	cut   bool       // guarded by mu
}

var errCut = errors.New("soak: the client cut its connections")

func (c *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		conn.Close()
		return nil, errCut
	}
	c.conns = append(c.conns, conn)
	return conn, nil
}

func (c *cutter) cutAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		conn.Close()
	}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// client is one simulated user: it connects, makes a few operations, and
// leaves, cleanly or abruptly, again and again until load ends.
type client struct {
	url, token string
	servers    []string
	hangBound  time.Duration
	slow       time.Duration // how long the slow calls that get cancelled would run
	tally      *tally
	rnd        *rand.Rand
}

func (c *client) run(load context.Context) {
	for load.Err() == nil {
		c.session(load)
	}
}

// session is one connection's life.
func (c *client) session(load context.Context) {
	cut := &cutter{}
	tr := &http.Transport{DialContext: cut.dial, MaxIdleConnsPerHost: 4}
	defer tr.CloseIdleConnections()
	version := versions[c.rnd.IntN(len(versions))]
	var sess *mcp.ClientSession
	err := c.timed("connect "+version, func(ctx context.Context) (outcome, error) {
		var err error
		sess, err = mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: &http.Client{Transport: bearer{c.token, tr}}},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		return failedIf(err), err
	})
	if err != nil {
		pause(load, 50*time.Millisecond) // serve is restarting a listener or refusing: do not spin
		return
	}
	cancelled := false
	for n := 3 + c.rnd.IntN(20); n > 0 && load.Err() == nil; n-- {
		cancelled = c.operate(sess)
	}
	if c.rnd.IntN(4) == 0 {
		cut.cutAll()
		c.tally.abandon(sess.ID())
		c.timed("abrupt close "+version, func(context.Context) (outcome, error) {
			sess.Close()
			return okay, nil // its DELETE cannot leave
		})
		return
	}
	kind := "close " + version
	if cancelled {
		// Kept apart: the backend's call may still run when the DELETE
		// arrives.
		kind += " after a cancelled call"
	}
	c.timed(kind, func(context.Context) (outcome, error) {
		err := sess.Close()
		return failedIf(err), err
	})
}

// operate makes one random operation on sess; cancelled says it was a call
// cancelled mid-call.
func (c *client) operate(sess *mcp.ClientSession) (cancelled bool) {
	server := c.servers[c.rnd.IntN(len(c.servers))]
	switch r := c.rnd.IntN(10); {
	case r < 5:
		msg := fmt.Sprintf("m%d", c.rnd.Int64())
		c.timed("call echo", func(ctx context.Context) (outcome, error) {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpclient.PublicToolName(server, "echo"), Arguments: map[string]any{"message": msg}})
			return checkText(res, err, "Echo: "+msg)
		})
	case r < 7:
		c.timed("list tools", func(ctx context.Context) (outcome, error) {
			_, err := sess.ListTools(ctx, nil)
			return failedIf(err), err
		})
	case r < 9:
		a, b := c.rnd.IntN(1000), c.rnd.IntN(1000)
		c.timed("call add", func(ctx context.Context) (outcome, error) {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpclient.PublicToolName(server, "add"), Arguments: map[string]any{"a": a, "b": b}})
			return checkText(res, err, fmt.Sprint(a+b))
		})
	default:
		cancelled = true
		after := time.Duration(10+c.rnd.IntN(300)) * time.Millisecond
		c.timed("cancelled call", func(ctx context.Context) (outcome, error) {
			ctx, cancel := context.WithTimeout(ctx, after)
			defer cancel()
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpclient.PublicToolName(server, "slow"), Arguments: map[string]any{"ms": c.slow.Milliseconds()}})
			if errors.Is(err, context.DeadlineExceeded) {
				return okay, nil // cancelled mid-call, as meant
			}
			if err == nil {
				return checkText(res, nil, "") // a tool error (the backend is down), or wrong
			}
			return failed, err
		})
	}
	return cancelled
}

// timed runs op with the hang bound as its deadline and records it.
func (c *client) timed(kind string, op func(ctx context.Context) (outcome, error)) error {
	return c.tally.timed(kind, c.hangBound, op)
}

// timed runs op with hangBound as its deadline and records it.
func (t *tally) timed(kind string, hangBound time.Duration, op func(ctx context.Context) (outcome, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	start := time.Now()
	how, err := op(ctx)
	t.record(kind, time.Since(start), hangBound, how, err)
	if how != okay && err == nil {
		err = errors.New(kind + " failed")
	}
	return err
}

// checkText says whether a call answered want: a call that failed (a
// backend being killed or reloaded away) is a failure, another answer is
// wrong.
func checkText(res *mcp.CallToolResult, err error, want string) (outcome, error) {
	if err != nil {
		return failed, err
	}
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok && tc.Text == want {
			return okay, nil
		}
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return failed, fmt.Errorf("tool error: %s", text)
	}
	return wrong, fmt.Errorf("answered %+v, want %q", res.Content, want)
}

func failedIf(err error) outcome {
	if err != nil {
		return failed
	}
	return okay
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d): // a back-off, not a wait for an event
	}
}
