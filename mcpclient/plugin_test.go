package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestNewSpec(t *testing.T) {
	cfg := stdioConfig("gh")
	cfg.FailOnStartupError = true
	spec, err := NewSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := host.Spec{
		Config:         cfg.WithDefaults(),
		Name:           "gh",
		Summary:        "stdio",
		Claims:         []host.Claim{{Key: "serverName", Value: "gh"}},
		StartupTimeout: DefaultStartupTimeout,
		Strict:         true,
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("NewSpec (-want +got):\n%s", diff)
	}
	if _, err := NewSpec(Config{ServerName: "a__b"}); err == nil || !strings.Contains(err.Error(), `must not contain "__"`) {
		t.Errorf("NewSpec of a bad config = %v", err)
	}
}

func TestKindDecode(t *testing.T) {
	k := NewKind(KindOptions{})
	if k.Name() != PluginName {
		t.Errorf("Name = %q", k.Name())
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("serverName: s\ntransport: stdio\ncommand: ${CMD}\n"), &doc); err != nil {
		t.Fatal(err)
	}
	spec, err := k.Decode(doc.Content[0], func(string) (string, bool) { return "the-server", true })
	if err != nil {
		t.Fatal(err)
	}
	if c := spec.Config.(Config); c.Command != "the-server" || c.ToolCallTimeout != DefaultToolCallTimeout || spec.Name != "s" {
		t.Errorf("decoded %+v", spec)
	}
	if _, err := k.Decode(nil, nil); err == nil || !strings.Contains(err.Error(), "is required") {
		t.Errorf("Decode(nil) = %v", err)
	}
}

// startInstance starts cfg through the kind, against srv in memory.
func startInstance(t *testing.T, k *Kind, cfg Config) host.Instance {
	t.Helper()
	spec, err := NewSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := mcptest.NewLog()
	in, err := k.Start(context.Background(), spec, host.Env{ID: "e", Registry: newRegistry(), Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

func waitReady(t *testing.T, in host.Instance) {
	t.Helper()
	select {
	case <-in.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("never ready")
	}
}

func TestKindInstance(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	release := make(chan struct{})
	defer close(release)
	hung := mcppeer.Fixture(mcppeer.FixtureOptions{})
	mcptest.HoldHandshake(hung, mcptest.Hang(release))
	transports := map[string]*mcp.Server{"ok": srv, "hung": hung, "hung2": hung}
	k := NewKind(KindOptions{OneShot: true, NewTransport: func(cfg Config) func() (mcp.Transport, error) {
		if s := transports[cfg.ServerName]; s != nil {
			return inMemory(t, s)
		}
		return nil
	}})

	ok := startInstance(t, k, stdioConfig("ok"))
	waitReady(t, ok)
	st := ok.Status()
	if st.State != host.StateReady || st.Name != "ok" || st.Transport != "stdio" || st.PeerName != "fixture-server" || st.PeerVersion != "1.0.0" || st.Tools != len(mcppeer.FixtureTools()) || st.ProtocolVersion == "" {
		t.Errorf("ready status %+v", st)
	}
	if err := ok.StartErr(); err != nil {
		t.Errorf("StartErr = %v", err)
	}
	if err := ok.Close(); err != nil {
		t.Fatal(err)
	}
	if st := ok.Status(); st.State != host.StateClosed || st.Tools != 0 {
		t.Errorf("closed status %+v", st)
	}

	// Hanging in initialize: timed out; strict, it is a start error.
	cfg := stdioConfig("hung")
	cfg.StartupTimeout = 50 * time.Millisecond
	cfg.FailOnStartupError = true
	in := startInstance(t, k, cfg)
	if st := in.Status(); st.State != host.StateStarting {
		t.Errorf("status before settling: %+v", st)
	}
	if err := in.StartErr(); err != nil {
		t.Errorf("StartErr before settling = %v", err)
	}
	waitReady(t, in)
	if st := in.Status(); st.State != host.StateTimedOut || !strings.Contains(st.Err, "no answer within startupTimeoutMs (50ms)") {
		t.Errorf("timed-out status %+v", st)
	}
	if err := in.StartErr(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("StartErr = %v, want the deadline", err)
	}
	// Not strict: the same failure is no start error.
	cfg.ServerName, cfg.FailOnStartupError = "hung2", false
	in = startInstance(t, k, cfg)
	waitReady(t, in)
	if err := in.StartErr(); err != nil {
		t.Errorf("StartErr without failOnStartupError = %v", err)
	}

	// A failure that is not a timeout.
	cfg = Config{ServerName: "gone", Transport: TransportStdio, Command: "/no/such/server"}
	in = startInstance(t, k, cfg)
	waitReady(t, in)
	if st := in.Status(); st.State != host.StateFailed || !strings.Contains(st.Err, "/no/such/server") {
		t.Errorf("failed status %+v", st)
	}

	// Serving (not one-shot), a failed first attempt retries.
	serving := NewKind(KindOptions{})
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: time.Hour, MaxDelay: time.Hour, MaxAttempts: 3}
	in = startInstance(t, serving, cfg)
	waitReady(t, in)
	// From Ready on it shows as reconnecting: at once, from the first
	// attempt's outcome, then from the supervisor's own state.
	if st := in.Status(); st.State != host.StateReconnecting || !strings.Contains(st.Err, "/no/such/server") {
		t.Errorf("status once ready: %+v", st)
	}
	waitFor(t, "the first retry scheduled", func() bool { return in.Status().Attempt == 1 })
	if st := in.Status(); st.State != host.StateReconnecting || st.MaxAttempts != 3 {
		t.Errorf("reconnecting status %+v", st)
	}
}

func TestKindStartErrors(t *testing.T) {
	k := NewKind(KindOptions{})
	env := host.Env{Registry: newRegistry()}
	if _, err := k.Start(context.Background(), host.Spec{Config: "nope"}, env); err == nil || !strings.Contains(err.Error(), "the entry's config is a string, not an mcpclient.Config") {
		t.Errorf("Start with a foreign config = %v", err)
	}
	if _, err := k.Start(context.Background(), host.Spec{Config: Config{}}, env); err == nil || !strings.Contains(err.Error(), "serverName is required") {
		t.Errorf("Start with an invalid config = %v", err)
	}
}
