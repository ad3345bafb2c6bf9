package gateway

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
)

// One timer writes the priming events of a session's streams: each once
// it is due, a later one on the timer armed again, none for a stream
// answered first; the timer stays unarmed once nothing waits.
func TestPrimerWritesDueEvents(t *testing.T) {
	var p primer
	stream := func(due time.Duration) (*wireStream, *httptest.ResponseRecorder) {
		w := httptest.NewRecorder()
		s := &wireStream{id: "x", w: w, held: make(chan struct{}), pending: true, primeAt: time.Now().Add(due)}
		p.add(s)
		return s, w
	}
	soon, soonW := stream(0)
	later, laterW := stream(3 * primeFlush)
	answered, answeredW := stream(0)
	answered.mu.Lock()
	answered.releaseLocked()
	answered.mu.Unlock()

	written := func(s *wireStream, w *httptest.ResponseRecorder) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return strings.Contains(w.Body.String(), "id: x_0")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !written(later, laterW) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !written(soon, soonW) || !written(later, laterW) {
		t.Fatalf("priming events written: the due stream's %v, the later stream's %v; want both", written(soon, soonW), written(later, laterW))
	}
	if written(answered, answeredW) {
		t.Error("a stream answered before its priming event was due got it")
	}
	if ct := laterW.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("a primed stream's Content-Type is %q, want text/event-stream", ct)
	}
	for time.Now().Before(deadline) {
		p.mu.Lock()
		armed, waiting := p.armed, len(p.waiting)
		p.mu.Unlock()
		if !armed && waiting == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Error("the timer is still armed with nothing waiting")
}

// isLoopbackAddr reads a listener's address as loopback.Host reads its
// string.
func TestIsLoopbackAddr(t *testing.T) {
	for _, addr := range []net.Addr{
		&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("127.3.2.1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 80, Zone: "lo"},
		&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 80},
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 80, Zone: "eth0"},
		&net.TCPAddr{Port: 80},
		&net.UnixAddr{Name: "/tmp/s", Net: "unix"},
	} {
		if got, want := isLoopbackAddr(addr), loopback.Host(hostOnly(addr.String())); got != want {
			t.Errorf("isLoopbackAddr(%v) = %v, want %v", addr, got, want)
		}
	}
}
