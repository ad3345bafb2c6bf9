package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A forward's signature verifies only for its session, under the
// replicas' secret, within a minute of its time.
func TestCheckForward(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	good := signForward(secret, "s1", now)
	for _, c := range []struct {
		name, sig, session string
		at                 time.Time
		want               string
	}{
		{"signed", good, "s1", now, ""},
		{"a little later", good, "s1", now.Add(50 * time.Second), ""},
		{"another session", good, "s2", now, "does not verify under this replica's secret"},
		{"another secret", signForward([]byte("other"), "s1", now), "s1", now, "the replicas do not share one store"},
		{"replayed later", good, "s1", now.Add(2 * time.Minute), "is 2m0s old"},
		{"made up", "1800000000.00", "s1", now, "does not verify under this replica's secret"},
		{"not a signature", "yes", "s1", now, "only sent by the gateway's replicas"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkForward(secret, c.sig, c.session, c.at)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("checkForward = %v, want %q", err, c.want)
			}
		})
	}
}

// A client that hangs up while its request is being forwarded leaves the
// owner's record where it was: only an owner that cannot be reached loses
// it. Any client that knows a session's id, or a replica's tag (every
// task id names one), could otherwise unroute them all by hanging up.
func TestForwardLeftByItsClientKeepsTheRoute(t *testing.T) {
	started := make(chan struct{}, 1)
	reg := tool.NewRegistry()
	wait := goTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		started <- struct{}{}
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	})
	if _, err := reg.Register(wait); err != nil {
		t.Fatal(err)
	}
	_, ts := openTaskStore(t)
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	a := serveHTTP(t, newGateway(t, reg, opts), opts)
	b, stopB := startHTTP(t, newGateway(t, reg, opts), opts)
	client := openRawHTTP(t, a, "")
	name := "session:" + client.session
	if _, ok, err := ts.Owner(t.Context(), name); !ok || err != nil {
		t.Fatalf("the session's owner is not recorded (%v)", err)
	}
	ctx, hangUp := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", client.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitSignal(t, started, "the call forwarded to its session's replica")
	hangUp()
	<-done
	if err := stopB(); err != nil { // its handlers, the forward's included, have returned
		t.Fatal(err)
	}
	if _, ok, err := ts.Owner(t.Context(), name); !ok || err != nil {
		t.Errorf("after its client hung up on a forwarded request, the session's owner record is gone (%v)", err)
	}
}

// What a replica tags reads back as its tag and its own part, and
// nothing else reads as tagged: the routing (stateTag) and the console's
// display (Untagged) parse it in one place.
func TestTaggedReadsBack(t *testing.T) {
	state := newState("KqPzhBx-gEE3")
	if got := stateTag(state); got != "KqPzhBx-gEE3" {
		t.Errorf("stateTag(%q) = %q, want the replica's tag", state, got)
	}
	if got := Untagged(state); got == state || tagged("KqPzhBx-gEE3")+got != state {
		t.Errorf("Untagged(%q) = %q, want the part after the tag", state, got)
	}
	for _, plain := range []string{"d3aeaa72", "mcpbridge.notag", "other.tag.id", ""} {
		if got := stateTag(plain); got != "" {
			t.Errorf("stateTag(%q) = %q, want none", plain, got)
		}
		if got := Untagged(plain); got != plain {
			t.Errorf("Untagged(%q) = %q, want it unchanged", plain, got)
		}
	}
}

// A store that loses the replicas' secret (restarted empty, or the key
// evicted) gets a new one from the next replica that asks. The replicas
// that held the old one come to the new one: the owner of a session reads
// it again when a signature does not verify under its own, and still
// takes the old one from a replica that has not read the new one yet,
// instead of refusing every forward (403) until it restarts.
func TestForwardAfterTheSecretChanged(t *testing.T) {
	reg := tool.NewRegistry()
	srv, a, b, ts := replicaPair(t, reg, Options{}, time.Minute)
	client := openRawHTTP(t, a, "")
	via := func(base string) *wireMessage {
		c := &rawHTTP{t: t, endpoint: base + "/mcp", session: client.session}
		m := c.request("tools/list", `{}`)
		return &m
	}
	if m := via(b); m.Error != nil {
		t.Fatalf("tools/list forwarded from b: %+v", m.Error)
	}
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rc.Close()
	if n, err := rc.Del(t.Context(), t.Name()+":replicas:secret").Result(); n != 1 || err != nil {
		t.Fatalf("deleting the replicas' secret: %d, %v", n, err)
	}
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	c := serveHTTP(t, newGateway(t, reg, opts), opts) // makes a new secret
	if m := via(c); m.Error != nil {
		t.Errorf("forwarded from a replica with the new secret: %+v", m.Error)
	}
	if m := via(b); m.Error != nil {
		t.Errorf("forwarded from a replica with the old secret: %+v", m.Error)
	}
}

// A forward whose signature cannot be checked, the store being down, is
// answered 503 with Retry-After (it may be sent again), not 403 as one
// that does not verify.
func TestForwardUncheckedWithTheStoreDown(t *testing.T) {
	srv, ts := openTaskStore(t)
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	a := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	client := openRawHTTP(t, a, "")
	srv.Stop()
	m, resp := client.postWith(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, http.Header{replicaHeader: {signForward([]byte("not the secret"), client.session, time.Now())}})
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(m.Error.Message, "cannot be read") {
		t.Errorf("a forward with the store down: %s %q %+v, want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"), m.Error)
	}
}

// A request for a session another replica holds, while the store that
// says which cannot be reached, is answered 503 with Retry-After: the
// session is not known to be gone, and a 404 would have the client drop
// it.
func TestForwardWithTheStoreDownIsNotGone(t *testing.T) {
	srv, a, b, _ := replicaPair(t, tool.NewRegistry(), Options{}, time.Minute)
	client := openRawHTTP(t, a, "")
	srv.Stop()
	via := &rawHTTP{t: t, endpoint: b + "/mcp", session: client.session}
	m, resp := via.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a session held elsewhere, the store down: %s %+v, want 503 with Retry-After", resp.Status, m.Error)
	}
}

// Where a replica is reached is recorded again when a better address
// comes: the config's advertise, new or changed by a reload, or, without
// one, an address off loopback after one on it (a probe's or a
// sidecar's first request).
func TestBetterSelf(t *testing.T) {
	for _, c := range []struct {
		cur           string
		curAdvertised bool
		next          string
		advertised    bool
		want          bool
	}{
		{"", false, "http://127.0.0.1:7410", false, true},
		{"http://127.0.0.1:7410", false, "http://10.0.0.5:7410", false, true},
		{"http://localhost:7410", false, "http://10.0.0.5:7410", false, true},
		{"http://10.0.0.5:7410", false, "http://127.0.0.1:7410", false, false},
		{"http://10.0.0.5:7410", false, "http://10.0.0.6:7410", false, false},
		{"http://10.0.0.5:7410", false, "http://pod-a:7410", true, true},
		{"http://pod-a:7410", true, "http://pod-b:7410", true, true},
		{"http://pod-a:7410", true, "http://pod-a:7410", true, false},
		{"http://pod-a:7410", true, "http://10.0.0.5:7410", false, true},
		{"http://10.0.0.5:7410", false, "", false, false},
	} {
		if got := betterSelf(c.cur, c.curAdvertised, c.next, c.advertised); got != c.want {
			t.Errorf("betterSelf(%q, %v, %q, %v) = %v, want %v", c.cur, c.curAdvertised, c.next, c.advertised, got, c.want)
		}
	}
}

// advertisingGate is sharedGate with an advertise a test changes, as a
// reload would.
type advertisingGate struct {
	sharedGate
	advertise *atomic.Pointer[string]
}

func (g advertisingGate) SessionOwners() (SessionOwners, string) {
	owners, _ := g.sharedGate.SessionOwners()
	return owners, *g.advertise.Load()
}

// A reload that changes advertise moves the replica's record to the new
// address with its next request, and its sessions' records with their
// next renewal: parked calls, tasks and sessions forwarded to it no longer
// go to the address it had.
func TestReplicaRecordFollowsAdvertise(t *testing.T) {
	_, ts := openTaskStore(t)
	addr := &atomic.Pointer[string]{}
	first := "http://pod-a.example:7410"
	addr.Store(&first)
	opts := Options{Gate: advertisingGate{sharedGate{ts: ts, lease: time.Minute}, addr}}
	g := newGateway(t, tool.NewRegistry(), opts)
	base := serveHTTP(t, g, opts)
	early := openRawHTTP(t, base, "")
	read := func() string {
		owner, _, err := ts.Owner(t.Context(), "replica:"+g.parked.tag)
		if err != nil {
			t.Fatal(err)
		}
		return owner
	}
	if got := read(); got != first {
		t.Fatalf("the replica's record: %q, want %q", got, first)
	}
	moved := "http://pod-b.example:7410"
	addr.Store(&moved)
	openRawHTTP(t, base, "")
	if got := read(); got != moved {
		t.Errorf("after advertise changed, the replica's record: %q, want %q", got, moved)
	}
	// The sessions opened before are renewed at the new address too.
	if live, _ := g.ownedSessions(); !slices.Contains(live[moved], "session:"+early.session) {
		t.Errorf("after advertise changed, the renewal records %v; want the session opened before at %s", live, moved)
	}
}

// A session recorded while the renewal lists the open sessions (after
// its mark) may be open but missing from the list: its record is kept
// this round, not dropped for good; one recorded before the mark and not
// open has ended.
func TestOwnedSessionRecordedDuringTheSweepKept(t *testing.T) {
	rs := &replicaSessions{}
	rs.owned = map[string]ownedName{"session:ended": {owner: "http://a", seq: 1}, "session:open": {owner: "http://a", seq: 2}}
	rs.records = 2
	mark := rs.records
	rs.owned["session:new"] = ownedName{owner: "http://a", seq: 3} // recorded after the mark
	rs.records = 3
	live, ended := rs.sweepLocked(map[string]bool{"open": true}, mark)
	slices.Sort(live["http://a"])
	if want := []string{"session:new", "session:open"}; !slices.Equal(live["http://a"], want) || !slices.Equal(ended, []string{"session:ended"}) {
		t.Errorf("live %v, ended %v; want %v live and session:ended ended", live, ended, want)
	}
	if _, ok := rs.owned["session:new"]; !ok {
		t.Error("the session recorded during the sweep was forgotten")
	}
}

// A client cannot make a replica drop another's record: a forwarded
// request that asks for a protocol switch the proxy refuses before it
// sends anything (an Upgrade with a tab) is answered without touching the
// session's record, which only an owner that cannot be dialled loses.
func TestForwardRefusedUpgradeKeepsTheRoute(t *testing.T) {
	_, a, b, ts := replicaPair(t, tool.NewRegistry(), Options{}, time.Minute)
	client := openRawHTTP(t, a, "")
	name := "session:" + client.session
	viaB := *client
	viaB.endpoint = b + "/mcp"
	for i, upgrade := range []string{"x\ty", "h2c\x80"} {
		m, resp := viaB.postWith(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1),
			http.Header{"Connection": {"Upgrade"}, "Upgrade": {upgrade}})
		if _, ok, err := ts.Owner(t.Context(), name); !ok || err != nil {
			t.Fatalf("after a forwarded request asking to switch to %q (answered %d %v), the session's owner record is gone (%v)", upgrade, resp.StatusCode, m.Error, err)
		}
	}
	// The session still answers through b.
	if m, resp := viaB.post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); resp.StatusCode != http.StatusOK || m.Error != nil {
		t.Errorf("a ping forwarded through the other replica: %d %v, want 200 and a result", resp.StatusCode, m.Error)
	}
}

// An owner that cannot be dialled loses its record: the session is gone
// (404) and the next replica asked finds no owner to try.
func TestForwardToAnOwnerNotThereDropsItsRecord(t *testing.T) {
	_, ts := openTaskStore(t)
	opts := Options{Gate: sharedGate{ts: ts, lease: time.Minute}}
	b := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	if err := ts.PutOwners(t.Context(), []string{"session:elsewhere"}, gone, time.Minute); err != nil {
		t.Fatal(err)
	}
	client := &rawHTTP{t: t, endpoint: b + "/mcp", session: "elsewhere"}
	if _, resp := client.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a session whose owner is not there: %d, want 404", resp.StatusCode)
	}
	// (The store began holding records with this test: a name without
	// one is settling, not unowned, for a record's ttl.)
	if owner, ok, err := ts.Owner(t.Context(), "session:elsewhere"); ok || (err != nil && !errors.Is(err, store.ErrOwnersSettling)) {
		t.Errorf("the record of an owner not there is kept: %q (%v)", owner, err)
	}
}

// A request for a session another replica holds, just after the store
// restarted empty (before its owner wrote the record again), is answered
// 503 with Retry-After, not 404: the client keeps its session.
func TestForwardAfterAnEmptyStoreRestartIsNotGone(t *testing.T) {
	srv, a, b, _ := replicaPair(t, tool.NewRegistry(), Options{}, time.Minute)
	client := openRawHTTP(t, a, "")
	srv.Stop()
	srv.Start() // empty
	via := &rawHTTP{t: t, endpoint: b + "/mcp", session: client.session}
	var m wireMessage
	var resp *http.Response
	for range 3 { // the first request after the restart may meet a dead pooled connection
		if m, resp = via.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); !strings.Contains(m.Error.Message, "cannot be reached") {
			break
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(m.Error.Message, "restarted") {
		t.Errorf("a session held elsewhere, the store restarted empty: %s %+v, want 503 with Retry-After saying the store restarted", resp.Status, m.Error)
	}
}

// A replica reloaded onto another store (its keyPrefix changed, the
// others' not) refuses what the others forward to it, its secret no
// longer theirs; the refusal, which its client and its log read, says
// that the replicas do not share one store and what must match. It said
// only that the header is sent by replicas alone, as for a forgery.
func TestForwardBetweenReplicasOfTwoStores(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("echo", textBody("echoed"))); err != nil {
		t.Fatal(err)
	}
	srv, before := openTaskStore(t)
	after, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":reloaded:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { after.Close() })
	optsA := Options{Gate: sharedGate{ts: after, lease: time.Minute}}
	optsB := Options{Gate: sharedGate{ts: before, lease: time.Minute}}
	a := serveHTTP(t, newGateway(t, reg, optsA), optsA)
	b := serveHTTP(t, newGateway(t, reg, optsB), optsB)
	client := openRawHTTP(t, a, "")
	name := "session:" + client.session
	owner, ok, err := after.Owner(t.Context(), name)
	if !ok || err != nil {
		t.Fatalf("the session's owner is not recorded (%v)", err)
	}
	// The record a was renewing in the store it used before its reload.
	if err := before.PutOwners(t.Context(), []string{name}, owner, time.Minute); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, b+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", client.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "the replicas do not share one store") || !strings.Contains(string(body), "keyPrefix") {
		t.Errorf("a request forwarded to a replica of another store: %s %s", resp.Status, body)
	}
}
