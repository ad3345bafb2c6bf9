package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// lockedLog is a log written by several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// count is how many lines of the log hold s.
func (l *lockedLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// driftReplica is one replica of a config-drift test: its base URL, the
// digest of the config it applies, and its log.
type driftReplica struct {
	base   string
	digest *atomic.Pointer[string]
	log    *lockedLog
	gw     *Gateway
}

// health is the replica's /healthz: its status and body.
func (r driftReplica) health(t *testing.T, path string) (int, Health) {
	t.Helper()
	resp, err := http.Get(r.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var h Health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	return resp.StatusCode, h
}

// warning is the replica's /healthz warning that the replicas' configs
// differ, "" without one.
func (r driftReplica) warning(t *testing.T) string {
	_, h := r.health(t, "/healthz")
	for _, b := range h.Backends {
		if b.Name == "replica configs" {
			return b.State + ": " + b.Error
		}
	}
	return ""
}

// driftReplicas serves n gateways sharing sessions in one real
// redis-server, each applying the config digest, renewing its records
// every renew.
func driftReplicas(t *testing.T, n int, digest string, renew time.Duration) []driftReplica {
	srv := mcptest.StartRedis(t)
	var out []driftReplica
	for range n {
		r, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		d := &atomic.Pointer[string]{}
		d.Store(&digest)
		l := &lockedLog{}
		opts := Options{Gate: sharedGate{ts: r, lease: time.Minute}, renewEvery: renew,
			Logger: slog.New(slog.NewTextHandler(l, nil)), ConfigDigest: func() string { return *d.Load() }}
		g := newGateway(t, tool.NewRegistry(), opts)
		out = append(out, driftReplica{base: serveHTTP(t, g, opts), digest: d, log: l, gw: g})
	}
	return out
}

// Three replicas on one store apply the same config: no warning. One of
// them comes to apply another (its policy changed): at their next renewal,
// every replica's /healthz warns, saying how many replicas apply which,
// while /healthz and /readyz stay 200; each logs it once as it starts.
// Back to the same config, the warning is gone and each logs once that
// it ended. A replica that stops is no longer counted at once. Nothing
// showed that replicas ran different configs.
func TestReplicasApplyingDifferentConfigs(t *testing.T) {
	const renew = 100 * time.Millisecond
	// A few renewals, with room for a loaded machine.
	const within = 50 * renew
	same := strings.Repeat("a1", 32)
	other := strings.Repeat("b2", 32)
	replicas := driftReplicas(t, 3, same, renew)
	waitFor(t, "every replica to read the three replicas' configs", func() bool {
		for _, r := range replicas {
			r.gw.configs.mu.Lock()
			n := len(r.gw.configs.live)
			r.gw.configs.mu.Unlock()
			if n != 3 {
				return false
			}
		}
		return true
	})
	for i, r := range replicas {
		if w := r.warning(t); w != "" || r.gw.ReplicaConfigs() != 1 {
			t.Errorf("replica %d, every replica applying one config: warned %q, %d configs", i, w, r.gw.ReplicaConfigs())
		}
	}

	replicas[2].digest.Store(&other)
	want := []string{
		"differ: replicas apply 2 different configs: this one a1a1a1a1a1a1 (2 replicas), other b2b2b2b2b2b2 (1)",
		"differ: replicas apply 2 different configs: this one a1a1a1a1a1a1 (2 replicas), other b2b2b2b2b2b2 (1)",
		"differ: replicas apply 2 different configs: this one b2b2b2b2b2b2 (1 replica), other a1a1a1a1a1a1 (2)",
	}
	for i, r := range replicas {
		mcptest.Eventually(t, within, func() bool { return strings.HasPrefix(r.warning(t), want[i]) },
			"replica %d to warn %q; it says %q", i, want[i], r.warning(t))
		for _, path := range []string{"/healthz", "/readyz"} {
			if code, h := r.health(t, path); code != http.StatusOK || !h.OK {
				t.Errorf("replica %d's %s while the configs differ: %d %+v, want 200: only a warning", i, path, code, h)
			}
		}
		if n := r.gw.ReplicaConfigs(); n != 2 {
			t.Errorf("replica %d counts %d configs, want 2", i, n)
		}
	}
	time.Sleep(5 * renew)
	for i, r := range replicas {
		if n := r.log.count("replicas apply 2 different configs"); n != 1 {
			t.Errorf("replica %d logged the configs differing %d times, want once:\n%s", i, n, r.log.b.String())
		}
	}

	replicas[2].digest.Store(&same)
	for i, r := range replicas {
		mcptest.Eventually(t, within, func() bool { return r.warning(t) == "" },
			"replica %d's warning to end; it says %q", i, r.warning(t))
	}
	time.Sleep(5 * renew)
	for i, r := range replicas {
		if n := r.log.count("the replicas apply one config again"); n != 1 {
			t.Errorf("replica %d logged the configs agreeing again %d times, want once:\n%s", i, n, r.log.b.String())
		}
	}

	// A replica stopped in order takes its record with it.
	replicas[2].digest.Store(&other)
	mcptest.Eventually(t, within, func() bool { return replicas[0].warning(t) != "" }, "the warning again")
	if err := replicas[2].gw.Close(); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, within, func() bool { return replicas[0].warning(t) == "" },
		"the warning to end once the replica applying another config stopped; it says %q", replicas[0].warning(t))
}
