package mcpclient

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// restartableHTTP serves a fresh fixture server on one fixed loopback port,
// and can be stopped and started again on it, as a real server restart
// (or a network cut and its repair) looks to a client.
type restartableHTTP struct {
	t         *testing.T
	addr      string
	stateless bool
	srv       *http.Server
	fixture   *mcp.Server
	done      chan struct{}
}

func newRestartableHTTP(t *testing.T, stateless bool) *restartableHTTP {
	r := &restartableHTTP{t: t, stateless: stateless}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartableHTTP) url() string { return "http://" + r.addr + "/mcp" }

func (r *restartableHTTP) start() {
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ { // the port may linger briefly after a stop
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("listen %s: %v", addr, err)
	}
	r.addr = ln.Addr().String()
	fixture := mcppeer.Fixture(mcppeer.FixtureOptions{})
	r.fixture = fixture
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture }, &mcp.StreamableHTTPOptions{
		Stateless: r.stateless, PropagateRequestCancellation: r.stateless,
	})
	r.srv = &http.Server{Handler: h}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		r.srv.Serve(ln)
	}()
}

// stop closes the listener and every connection at once.
func (r *restartableHTTP) stop() {
	if r.srv == nil {
		return
	}
	r.srv.Close()
	<-r.done
	r.srv = nil
	for ss := range r.fixture.Sessions() { // a stopped server keeps no sessions
		ss.Close()
	}
}

// A Streamable HTTP server that goes away and comes back on the same port
// is reconnected by itself, with the same tool names, for both protocol
// eras: the older one notices through its GET stream and the session's
// 404, the newer one through its subscriptions/listen stream.
func TestHTTPServerRestart(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			rs := newRestartableHTTP(t, stateless)
			cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: rs.url(), Reconnect: fastReconnect(100)}
			h := mustStart(t, cfg, Options{})
			before := h.names()
			rs.stop()
			start := time.Now()
			waitFor(t, "the loss to be noticed", func() bool { return h.srv.Status().State == StateReconnecting })
			lost := time.Since(start)
			if got := h.call("mcp__web__greet", `{"name":"x"}`).Text(); !strings.HasPrefix(got, `Error: server "web" is reconnecting`) {
				t.Errorf("call while down: %q", got)
			}
			rs.start()
			waitFor(t, "the reconnect", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected) })
			t.Logf("loss noticed after %v, back %v after the restart", lost, time.Since(start))
			if got := h.call("mcp__web__greet", `{"name":"again"}`).Text(); got != "Hello, again!" {
				t.Errorf("call after restart: %q", got)
			}
			if after := h.names(); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("names changed:\n%v\n%v", before, after)
			}
		})
	}
}
