//lint:file-ignore SA1019 MCP 2026-07-28 deprecates roots (SEP-2577) but keeps them working for at least a year; the long sessions are 2025-11-25 clients that declare them, as the gateway must carry.
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// The long-session mode (-long-sessions) holds each client to one
// 2025-11-25 session for the whole soak, declaring roots and calling at a
// steady rate, so that what the gateway keeps per call or per reload in a
// session that never ends shows in the heap: the default mode's sessions
// live for a few operations, and their end frees what they held.
const (
	longVersion     = "2025-11-25"
	longReloadEvery = 5 * time.Second
	longKillEvery   = 7 * time.Second
)

// longClient is one client of the long-session mode: one session, kept
// open (reopened only when serve drops it), calling at its share of the
// rate.
type longClient struct {
	url, token string
	root       string // the root it declares
	servers    []string
	hangBound  time.Duration
	every      time.Duration // between two calls
	tally      *tally
	rnd        *rand.Rand

	tr   *http.Transport
	sess *mcp.ClientSession // nil while it has none
}

// run calls until load ends, and keeps the session open after it: the
// soak measures serve with the sessions still held, and closes them last.
func (c *longClient) run(load context.Context) {
	c.tr = &http.Transport{MaxIdleConnsPerHost: 4}
	tick := time.NewTicker(c.every)
	defer tick.Stop()
	for load.Err() == nil {
		if c.sess == nil && c.connect() != nil {
			pause(load, 200*time.Millisecond) // serve refusing: do not spin
			continue
		}
		if err := c.operate(); errors.Is(err, mcp.ErrConnectionClosed) {
			c.sess.Close()
			c.sess = nil
		}
		select {
		case <-load.Done():
		case <-tick.C: // the client's pace: a missed tick is a call skipped
		}
	}
}

// connect opens the client's session, declaring its root.
func (c *longClient) connect() error {
	client := mcp.NewClient(&mcp.Implementation{Name: "soak-long", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: c.root, Name: "soak"})
	return c.tally.timed("connect "+longVersion, c.hangBound, func(ctx context.Context) (outcome, error) {
		var err error
		c.sess, err = client.Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: &http.Client{Transport: bearer{c.token, c.tr}}},
			&mcp.ClientSessionOptions{ProtocolVersion: longVersion})
		if err != nil {
			c.sess = nil
		}
		return failedIf(err), err
	})
}

// operate makes one call, now and then a list.
func (c *longClient) operate() error {
	server := c.servers[c.rnd.IntN(len(c.servers))]
	if c.rnd.IntN(50) == 0 {
		return c.tally.timed("list tools", c.hangBound, func(ctx context.Context) (outcome, error) {
			_, err := c.sess.ListTools(ctx, nil)
			return failedIf(err), err
		})
	}
	if c.rnd.IntN(2) == 0 {
		msg := fmt.Sprintf("m%d", c.rnd.Int64())
		return c.tally.timed("call echo", c.hangBound, func(ctx context.Context) (outcome, error) {
			res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpclient.PublicToolName(server, "echo"), Arguments: map[string]any{"message": msg}})
			return checkText(res, err, "Echo: "+msg)
		})
	}
	a, b := c.rnd.IntN(1000), c.rnd.IntN(1000)
	return c.tally.timed("call add", c.hangBound, func(ctx context.Context) (outcome, error) {
		res, err := c.sess.CallTool(ctx, &mcp.CallToolParams{Name: mcpclient.PublicToolName(server, "add"), Arguments: map[string]any{"a": a, "b": b}})
		return checkText(res, err, fmt.Sprint(a+b))
	})
}

// close ends the client's session with a DELETE.
func (c *longClient) close() {
	defer c.tr.CloseIdleConnections()
	if c.sess == nil {
		return
	}
	c.tally.timed("close "+longVersion, c.hangBound, func(context.Context) (outcome, error) {
		err := c.sess.Close()
		return failedIf(err), err
	})
}

// longClients are the long-session mode's clients, as o says.
func longClients(o options, w world, p *serveProc, t *tally, seed uint64) []*longClient {
	every := time.Duration(float64(time.Second) * float64(o.clients) / o.rate)
	cs := make([]*longClient, o.clients)
	for i := range cs {
		cs[i] = &longClient{url: p.mcpURL, token: p.token, root: fmt.Sprintf("file:///soak/client%d", i),
			servers: w.serverNames(), hangBound: o.hangBound, every: every, tally: t,
			rnd: rand.New(rand.NewPCG(seed, uint64(10+i)))}
	}
	return cs
}

// closeAll closes every client's session at once.
func closeAll(cs []*longClient) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(c.close)
	}
	wg.Wait()
}
