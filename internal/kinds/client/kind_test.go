package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
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
		StartupTimeout: mcpclient.DefaultStartupTimeout,
		Strict:         true,
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("NewSpec (-want +got):\n%s", diff)
	}
	if _, err := NewSpec(mcpclient.Config{ServerName: "a__b"}); err == nil || !strings.Contains(err.Error(), `must not contain "__"`) {
		t.Errorf("NewSpec of a bad config = %v", err)
	}
}

func TestKindDecode(t *testing.T) {
	k := NewKind(KindOptions{})
	if k.Name() != Name {
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
	if c := spec.Config.(mcpclient.Config); c.Command != "the-server" || c.ToolCallTimeout != mcpclient.DefaultToolCallTimeout || spec.Name != "s" {
		t.Errorf("decoded %+v", spec)
	}
	if _, err := k.Decode(nil, nil); err == nil || !strings.Contains(err.Error(), "is required") {
		t.Errorf("Decode(nil) = %v", err)
	}
}

// startInstance starts cfg through the kind, against srv in memory.
func startInstance(t *testing.T, k *Kind, cfg mcpclient.Config) host.Instance {
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
	k := NewKind(KindOptions{Server: mcpclient.Options{OneShot: true}, NewTransport: func(cfg mcpclient.Config) func() (mcp.Transport, error) {
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
	cfg = mcpclient.Config{ServerName: "gone", Transport: mcpclient.TransportStdio, Command: "/no/such/server"}
	in = startInstance(t, k, cfg)
	waitReady(t, in)
	if st := in.Status(); st.State != host.StateFailed || !strings.Contains(st.Err, "/no/such/server") {
		t.Errorf("failed status %+v", st)
	}

	// Serving (not one-shot), a failed first attempt retries.
	serving := NewKind(KindOptions{})
	cfg.Reconnect = &mcpclient.ReconnectPolicy{Enabled: true, InitialDelay: time.Hour, MaxDelay: time.Hour, MaxAttempts: 3}
	in = startInstance(t, serving, cfg)
	waitReady(t, in)
	// From Ready on it shows as reconnecting: at once, from the first
	// attempt's outcome, then from the supervisor's own state.
	if st := in.Status(); st.State != host.StateReconnecting || !strings.Contains(st.Err, "/no/such/server") {
		t.Errorf("status once ready: %+v", st)
	}
	mcptest.Eventually(t, 20*time.Second, func() bool { return in.Status().Attempt == 1 }, "the first retry scheduled")
	if st := in.Status(); st.State != host.StateReconnecting || st.MaxAttempts != 3 || st.Reconnects != 1 {
		t.Errorf("reconnecting status %+v, want 1 reconnect of 3", st)
	}
}

func TestKindStartErrors(t *testing.T) {
	k := NewKind(KindOptions{})
	env := host.Env{Registry: newRegistry()}
	if _, err := k.Start(context.Background(), host.Spec{Config: "nope"}, env); err == nil || !strings.Contains(err.Error(), "the entry's config is a string, not an mcpclient.Config") {
		t.Errorf("Start with a foreign config = %v", err)
	}
	if _, err := k.Start(context.Background(), host.Spec{Config: mcpclient.Config{}}, env); err == nil || !strings.Contains(err.Error(), "serverName is required") {
		t.Errorf("Start with an invalid config = %v", err)
	}
}

// The kind's shared mcpclient.Options reach every server it starts, with the
// registry, source and logger of the entry's host.Env instead of the
// mcpclient.Options' own; NewTransport(cfg) overrides Server.NewTransport, and
// returning nil falls back to it.
func TestKindServerOptions(t *testing.T) {
	foreignReg, foreignLog := newRegistry(), mcptest.NewLog()
	k := NewKind(KindOptions{
		Server: mcpclient.Options{
			Registry: foreignReg,
			Logger:   foreignLog.Logger(),
			OneShot:  true,
			NewTransport: func() (mcp.Transport, error) {
				return nil, errors.New("server gone")
			},
		},
		NewTransport: func(cfg mcpclient.Config) func() (mcp.Transport, error) {
			if cfg.ServerName == "ok" {
				return inMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
			}
			return nil
		},
	})
	reg, log := newRegistry(), mcptest.NewLog()
	start := func(name string) host.Instance {
		spec, err := NewSpec(stdioConfig(name))
		if err != nil {
			t.Fatal(err)
		}
		in, err := k.Start(context.Background(), spec, host.Env{ID: "e-" + name, Registry: reg, Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		waitReady(t, in)
		return in
	}

	if st := start("ok").Status(); st.State != host.StateReady || st.Tools != len(mcppeer.FixtureTools()) {
		t.Errorf("ok: %+v", st)
	}
	if _, found := reg.Get("mcp__ok__add"); !found || foreignReg.Len() != 0 {
		t.Errorf("tools registered in the host's registry %v, in mcpclient.Options.Registry %d", found, foreignReg.Len())
	}
	// One-shot (Server.OneShot) and connected by Server.NewTransport.
	if st := start("gone").Status(); st.State != host.StateFailed || st.Err != "server gone" {
		t.Errorf("gone: %+v", st)
	}
	if n := len(log.Lines()) + len(foreignLog.Lines()); n != 0 {
		t.Errorf("a one-shot server logged %d records:\n%s\n%s", n, log.Text(), foreignLog.Text())
	}
}

// Not one-shot, a server logs through the entry's logger, tagged with the
// entry (by the host) and the server.
func TestKindLogsTagged(t *testing.T) {
	k := NewKind(KindOptions{Server: mcpclient.Options{NewTransport: func() (mcp.Transport, error) { return nil, errors.New("server gone") }}})
	cfg := stdioConfig("gone")
	cfg.Reconnect = &mcpclient.ReconnectPolicy{Enabled: true, InitialDelay: time.Hour, MaxDelay: time.Hour, MaxAttempts: 1}
	spec, err := NewSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := mcptest.NewLog()
	in, err := k.Start(context.Background(), spec, host.Env{ID: "e", Registry: newRegistry(), Logger: log.Logger().With("entry", "e")})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	log.WaitForRecord(t, slog.LevelWarn, "connection attempt failed", "entry", "e", "server", "gone", "err", "server gone")
	log.WaitForRecord(t, slog.LevelWarn, "connection failed; retrying", "entry", "e", "server", "gone", "delay", "1h0m0s", "attempt", 1, "max_attempts", 1)
}

// Drain waits for the calls in flight, not for the server: at once when
// none is, until the last one returns otherwise, or until ctx ends. The
// instance is a host.Drainer.
func TestDrain(t *testing.T) {
	k := NewKind(KindOptions{NewTransport: func(mcpclient.Config) func() (mcp.Transport, error) {
		return inMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
	}})
	reg := newRegistry()
	spec, err := NewSpec(stdioConfig("d"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := k.Start(context.Background(), spec, host.Env{ID: "d", Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	waitReady(t, in)
	d, ok := in.(host.Drainer)
	if !ok {
		t.Fatal("the instance is not a host.Drainer")
	}
	if err := d.Drain(context.Background()); err != nil {
		t.Fatalf("Drain with no call in flight = %v", err)
	}

	// Two calls in flight, each cancelled by the test.
	type inFlight struct {
		cancel context.CancelFunc
		result chan tool.Result
	}
	slowCall := func() inFlight {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		started := make(chan struct{})
		var once sync.Once
		ctx = tool.WithProgress(ctx, func(p tool.Progress) {
			if p.Message == "started" {
				once.Do(func() { close(started) })
			}
		})
		c := inFlight{cancel, make(chan tool.Result, 1)}
		go func() {
			res, _ := reg.Execute(ctx, "mcp__d__slow", json.RawMessage(`{"ms": 60000}`))
			c.result <- res
		}()
		<-started
		return c
	}
	first, second := slowCall(), slowCall()

	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := d.Drain(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Drain with calls in flight = %v, want the deadline", err)
	}
	drained := make(chan error, 1)
	go func() { drained <- d.Drain(context.Background()) }()
	for i, c := range []inFlight{first, second} {
		select {
		case err := <-drained:
			t.Fatalf("Drain returned (%v) with %d call(s) in flight", err, 2-i)
		case <-time.After(20 * time.Millisecond):
		}
		c.cancel()
		if res := <-c.result; !res.IsError || !strings.Contains(res.Text(), "cancelled") {
			t.Errorf("call %d, cancelled: %q", i+1, res.Text())
		}
	}
	if err := <-drained; err != nil {
		t.Errorf("Drain once the calls returned = %v", err)
	}
	// Drain does not stop anything: the server still serves.
	if res, err := reg.Execute(context.Background(), "mcp__d__add", json.RawMessage(`{"a": 1, "b": 2}`)); err != nil || res.Text() != "3" {
		t.Errorf("add after Drain: %q, %v", res.Text(), err)
	}
}

func stdioConfig(serverName string) mcpclient.Config {
	return mcpclient.Config{ServerName: serverName, Transport: mcpclient.TransportStdio, Command: "unused"}
}

func newRegistry() *tool.Registry { return tool.NewRegistry() }

// inMemory connects every attempt to srv over in-memory pipes; the server
// sides close when the test ends.
func inMemory(t *testing.T, srv *mcp.Server) func() (mcp.Transport, error) {
	return func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ss.Close() })
		return ct, nil
	}
}

// Every field of mcpclient.Status reaches the host's Status under the
// same name, with its value.
func TestHostStatusKeepsEveryField(t *testing.T) {
	var s mcpclient.Status
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Struct:
			continue // StatusDetails: TestHostStatusKeepsDetails
		case reflect.String:
			f.SetString("v" + v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		default:
			t.Fatalf("field %s of kind %s: extend the test", v.Type().Field(i).Name, f.Kind())
		}
	}
	h := reflect.ValueOf(hostStatus(s))
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if v.Field(i).Kind() == reflect.Struct {
			continue
		}
		got := h.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("host.Status has no field %s", name)
			continue
		}
		if fmt.Sprint(got.Interface()) != fmt.Sprint(v.Field(i).Interface()) {
			t.Errorf("%s: host %v, mcpclient %v", name, got.Interface(), v.Field(i).Interface())
		}
	}
}

// The details of mcpclient.Status (pins, the definition scan, the
// sandbox, the recent stderr) reach the host's Status whole.
func TestHostStatusKeepsDetails(t *testing.T) {
	var s mcpclient.Status
	s.PinNotes = []string{"withheld tool echo: changed since pinned: description"}
	s.Scan = &mcpclient.ScanReport{Held: []string{"add"}, Findings: []mcpclient.ScanFinding{
		{Tool: "add", Kind: "tool", Server: "evil", Severity: "high", Rule: "secrets", Field: "/description", Excerpt: "~/.ssh/id_rsa"},
	}}
	s.Sandbox = &mcpclient.SandboxStatus{LandlockABI: 7, Network: true}
	s.Stderr = []string{"npm error code ENOTCACHED"}
	if n := reflect.TypeOf(s.StatusDetails).NumField(); n != 4 {
		t.Fatalf("StatusDetails has %d fields: extend the test", n)
	}
	h := hostStatus(s)
	want := host.Status{
		PinNotes: s.PinNotes,
		Scan: &host.ScanReport{Held: []string{"add"}, Findings: []host.ScanFinding{
			{Tool: "add", Kind: "tool", Server: "evil", Severity: "high", Rule: "secrets", Field: "/description", Excerpt: "~/.ssh/id_rsa"},
		}},
		Sandbox: &host.SandboxStatus{LandlockABI: 7, Network: true},
		Stderr:  []string{"npm error code ENOTCACHED"},
	}
	got := host.Status{PinNotes: h.PinNotes, Scan: h.Scan, Sandbox: h.Sandbox, Stderr: h.Stderr}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}
