package gateway

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// storeLink is the network between the replicas and a redis-server,
// which a test cuts (every connection closed, new ones refused) and
// mends, the server keeping its data meanwhile.
type storeLink struct {
	ln    net.Listener
	mu    sync.Mutex
	cut   bool       // guarded by mu
	conns []net.Conn // guarded by mu
}

func linkTo(t *testing.T, addr string) *storeLink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &storeLink{ln: ln}
	t.Cleanup(func() { ln.Close(); l.setCut(true) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go l.carry(c, addr)
		}
	}()
	return l
}

func (l *storeLink) carry(c net.Conn, addr string) {
	u, err := net.Dial("tcp", addr)
	l.mu.Lock()
	if err != nil || l.cut {
		l.mu.Unlock()
		c.Close()
		if u != nil {
			u.Close()
		}
		return
	}
	l.conns = append(l.conns, c, u)
	l.mu.Unlock()
	go func() { io.Copy(u, c); u.Close() }()
	io.Copy(c, u)
	c.Close()
}

func (l *storeLink) setCut(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = cut
	if cut {
		for _, c := range l.conns {
			c.Close()
		}
		l.conns = nil
	}
}

// A session opened while the store is out of reach is opened all the
// same, unrecorded, and its owner records it at its next renewal. Once
// the store is back, with its data, a request for it through another
// replica is answered 503 with Retry-After until then, and then served;
// it was answered 404 (a session that ended), and its client dropped it.
func TestForwardOfASessionOpenedWhileTheStoreWasOut(t *testing.T) {
	srv, ts := openTaskStore(t)
	// The store has held records for longer than a record's ttl (its
	// records are whole: a name without one is unowned).
	if err := ts.PutOwners(t.Context(), []string{"session:long-ago"}, "http://192.0.2.1:7410", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	link := linkTo(t, srv.Addr())
	var bases []string
	for range 2 {
		r, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: "redis://" + link.ln.Addr().String() + "/0", KeyPrefix: t.Name() + ":"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		opts := Options{Gate: sharedGate{ts: r, lease: time.Minute}}
		bases = append(bases, serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts))
	}
	openRawHTTP(t, bases[1], "")
	link.setCut(true)
	client := openRawHTTP(t, bases[0], "")
	via := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", session: client.session}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if m, resp := via.post(ping); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the store out of reach: %s %+v, want 503 with Retry-After", resp.Status, m.Error)
	}
	link.setCut(false)
	for deadline := time.Now().Add(ownerTTL / 3 * 2); ; {
		m, resp := via.post(ping)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			t.Fatalf("the store back with its data, before the owner renewed its records: %s %+v, want 503 with Retry-After, then the session served", resp.Status, m.Error)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
