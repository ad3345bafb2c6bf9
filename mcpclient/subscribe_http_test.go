package mcpclient

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// subscriptionsHTTP serves srv over stateless Streamable HTTP (where
// 2026-07-28 is spoken), ending the subscriptions/listen stream of a
// resource subscription after cut when cut is set, as a server that ends
// one subscription would: the first cuts of them, every one when cuts is
// negative. The session's own listen stream is left alone.
func subscriptionsHTTP(t *testing.T, srv *mcp.Server, cut time.Duration, cuts int32) (url string, subscriptionListens *atomic.Int32) {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, PropagateRequestCancellation: true,
	})
	listens := &atomic.Int32{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"resourceSubscriptions"`)) {
				if n := listens.Add(1); cut > 0 && (cuts < 0 || n <= cuts) {
					ctx, cancel := context.WithTimeout(r.Context(), cut)
					defer cancel()
					r = r.WithContext(ctx)
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, listens
}

// On 2026-07-28 a resource subscription is a subscriptions/listen stream
// of its own. Unsubscribing ends it, and so may the server: neither is
// the session's own listen stream ending, so neither is a lost
// connection (repeated subscribes and unsubscribes spent the reconnect
// budget until the server's tools were unregistered).
func TestSubscriptionStreamEndNotLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  time.Duration
	}{{"unsubscribed", 0}, {"ended by the server", 100 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOfferServer()
			url, listens := subscriptionsHTTP(t, o.srv, tc.cut, -1)
			cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: url, ProtocolVersion: "2026-07-28", Reconnect: fastReconnect(100)}
			h := mustStart(t, cfg, Options{})
			if v := h.srv.Status().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %s, want 2026-07-28", v)
			}
			for range 3 {
				before := listens.Load()
				cancel, err := h.reg.SubscribeResource(context.Background(), "web", "mem://text", func(string) {})
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the subscription's stream", func() bool { return listens.Load() > before })
				if tc.cut > 0 {
					time.Sleep(3 * tc.cut) // the server ends the stream
				}
				cancel()
			}
			time.Sleep(300 * time.Millisecond) // a loss would be noticed by now
			if st := h.srv.Status(); st.Reconnects != 0 || st.State != StateReady {
				t.Errorf("status %s after %d reconnects, want ready after none", st.State, st.Reconnects)
			}
			if h.log.HasRecord(slog.LevelWarn, "connection lost") {
				t.Errorf("a subscription's stream ending was taken for a lost connection:\n%s", h.log.Text())
			}
			// The session goes on: a new subscription's updates arrive.
			updates := make(chan string, 16)
			cancel, err := h.reg.SubscribeResource(context.Background(), "web", "mem://text", func(uri string) { updates <- uri })
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			if tc.cut == 0 {
				notifyUntilSeen(t, o.srv, updates, "mem://text")
			}
		})
	}
}

// On 2026-07-28 a server may end one resource subscription's stream,
// which the SDK neither opens again nor reports: the subscription is
// renewed, and its updates go on (they stopped for good, unseen); a
// server that keeps ending it is taken at its word after maxRenewals in
// renewalWindow, with a warning, and no longer asked.
func TestServerEndedSubscriptionRenewed(t *testing.T) {
	for _, tc := range []struct {
		name string
		cuts int32
	}{{"once", 1}, {"every time", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOfferServer()
			url, listens := subscriptionsHTTP(t, o.srv, 50*time.Millisecond, tc.cuts)
			cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: url, ProtocolVersion: "2026-07-28"}
			h := mustStart(t, cfg, Options{})
			updates := make(chan string, 16)
			cancel, err := h.reg.SubscribeResource(context.Background(), "web", "mem://text", func(uri string) { updates <- uri })
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			if tc.cuts > 0 {
				waitFor(t, "the subscription renewed", func() bool { return listens.Load() == 2 })
				notifyUntilSeen(t, o.srv, updates, "mem://text")
				if !h.log.HasRecord(slog.LevelInfo, "the server ended a resource subscription: renewed") {
					t.Errorf("the renewal was not logged:\n%s", h.log.Text())
				}
				return
			}
			const given = "the server keeps ending a resource subscription: not renewed, its updates stop"
			waitFor(t, "the subscription given up", func() bool { return h.log.HasRecord(slog.LevelWarn, given) })
			time.Sleep(200 * time.Millisecond) // a renewal past the bound would open a stream by now
			if n := listens.Load(); n != 1+maxRenewals {
				t.Errorf("%d subscription streams opened, want the first and %d renewals", n, maxRenewals)
			}
			if st := h.srv.Status(); st.Reconnects != 0 || st.State != StateReady {
				t.Errorf("status %s after %d reconnects, want ready after none", st.State, st.Reconnects)
			}
		})
	}
}
