package gateway

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// gateConnSpec describes a connection of the gate in TestConnGateMakeRoom.
type gateConnSpec struct {
	name, addr   string
	busy, served bool
	age          int // seconds before the test's time
}

// countAddr counts the connections from addr.
func countAddr(cs []gateConnSpec, addr string) int {
	n := 0
	for _, c := range cs {
		if c.addr == addr {
			n++
		}
	}
	return n
}

// Which connection makes room for a new one: of the connections not
// serving a request, one of the new one's address when that address is at
// its cap, one that never sent a request before a keep-alive one, the
// oldest first; none (refused) when every candidate is busy.
func TestConnGateMakeRoom(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		max, per  int
		conns     []gateConnSpec
		addr      string
		want      string // the victim; "" for none
		wantAdmit bool
	}{
		{"room left", 3, 3, []gateConnSpec{{name: "a", addr: "x"}}, "x", "", true},
		{"global cap: never-served before keep-alive", 2, 5,
			[]gateConnSpec{{name: "keepalive", addr: "x", served: true, age: 9}, {name: "silent", addr: "y", age: 1}}, "z", "silent", true},
		{"global cap: the oldest of a kind", 3, 5,
			[]gateConnSpec{{name: "old", addr: "x", age: 9}, {name: "new", addr: "y", age: 1}, {name: "busy", addr: "z", busy: true, age: 20}}, "z", "old", true},
		{"address cap: only that address's", 10, 2,
			[]gateConnSpec{{name: "other", addr: "y", age: 9}, {name: "mine-ka", addr: "x", served: true, age: 5}, {name: "mine-busy", addr: "x", busy: true, age: 1}}, "x", "mine-ka", true},
		{"address cap, all of it busy: refused", 10, 1,
			[]gateConnSpec{{name: "other", addr: "y", age: 9}, {name: "mine", addr: "x", busy: true}}, "x", "", false},
		{"global cap, all busy: refused", 2, 5,
			[]gateConnSpec{{name: "a", addr: "x", busy: true}, {name: "b", addr: "y", busy: true}}, "z", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newConnGate(nil, tt.max, tt.per, tt.per, nil)
			names := map[*gateConn]string{}
			for _, c := range tt.conns {
				gc := &gateConn{gate: g, owner: c.addr, busy: c.busy, served: c.served, since: t0.Add(-time.Duration(c.age) * time.Second)}
				g.conns[gc] = struct{}{}
				g.byOwner[c.addr]++
				names[gc] = c.name
			}
			victim, ok := g.makeRoom(tt.addr)
			if got := names[victim]; got != tt.want || ok != tt.wantAdmit {
				t.Errorf("makeRoom = %q, %v; want %q, %v", got, ok, tt.want, tt.wantAdmit)
			}
			if victim != nil && (len(g.conns) != len(tt.conns)-1 || g.byOwner[victim.owner] != countAddr(tt.conns, victim.owner)-1) {
				t.Errorf("the victim is still counted: %d conns, %d from %s", len(g.conns), g.byOwner[victim.owner], victim.owner)
			}
		})
	}
}

// A connection that net/http reports active has not necessarily a request
// to serve: its headers may have been refused (431), and it lingers while
// it is closed. Only a running handler makes it busy, so a flood of such
// connections is shed for a new client rather than refusing it.
func TestConnGateBusyOnlyWhileServing(t *testing.T) {
	g := newConnGate(nil, 1, 1, 1, nil)
	refused := &gateConn{gate: g, owner: "x", since: time.Unix(1000, 0)}
	g.conns[refused] = struct{}{}
	g.byOwner["x"]++
	g.track(refused, http.StateActive)
	if victim, ok := g.makeRoom("y"); victim != refused || !ok {
		t.Fatalf("a connection active without a handler: makeRoom = %v, %v; want it shed", victim, ok)
	}

	serving := &gateConn{gate: g, owner: "x", since: time.Unix(1000, 0)}
	g.conns[serving] = struct{}{}
	g.byOwner["x"]++
	req := httptest.NewRequest(http.MethodGet, "/livez", nil)
	req = req.WithContext(g.connContext(req.Context(), serving))
	g.serving(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		if victim, ok := g.makeRoom("y"); victim != nil || ok {
			t.Errorf("a connection whose handler runs: makeRoom = %v, %v; want a refusal", victim, ok)
		}
	})).ServeHTTP(httptest.NewRecorder(), req)
}

// A connection shed between its request's headers and its handler (its
// slot went to a newer one) and then claimed by the identity its request
// authenticated as leaves no count behind: the identity's was raised for
// good, and enough of them refused it every connection.
func TestClaimOfAShedConnectionCountsNothing(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	g := newConnGate(nil, 4, 4, 4, slog.New(slog.DiscardHandler))
	gc := g.admit(addrConn{server})
	if gc == nil {
		t.Fatal("the connection was refused")
	}
	g.mu.Lock()
	g.forgetLocked(gc) // shed
	g.mu.Unlock()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r = r.WithContext(context.WithValue(r.Context(), gateConnKey{}, gc))
	if !claim(r, "alice") {
		t.Fatal("the claim was refused")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.byOwner) != 0 {
		t.Errorf("counts left after a shed connection's claim: %v", g.byOwner)
	}
}

// addrConn is a net.Conn with a TCP peer address.
type addrConn struct{ net.Conn }

func (addrConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1234} }
