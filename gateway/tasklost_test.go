package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// auditLine is a line of trail: the call as its Gate saw it, and how it
// ended.
type auditLine struct {
	Replica, Identity string
	Tool, Public      string
	Session, Client   string
	Outcome           Outcome
	Resumed           bool // written through Resume, not by the call's own Enter
}

// trail is the audit trail the replicas of a test write, one line per
// call, through their Gate (auditGate).
type trail struct {
	mu    sync.Mutex
	lines []auditLine
}

func (tr *trail) add(l auditLine) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, l)
}

func (tr *trail) read() []auditLine {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]auditLine(nil), tr.lines...)
}

// auditGate is a replica's Gate sharing tasks in ts, writing a line to
// trail for each call it admits as the call ends (but one another
// replica wrote: Outcome.EndedElsewhere), and for each it is told of
// through Resume; once killed, its replica writes nothing more,
// neither to trail nor to the store, as a killed process does not.
type auditGate struct {
	name   string
	ts     TaskStore
	lease  time.Duration
	trail  *trail
	killed *atomic.Bool
}

func (g auditGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	identity := identityIn(ctx)
	return ctx, func(o Outcome) error {
		if !g.killed.Load() && !o.EndedElsewhere { // the replica that ended it wrote its line
			g.trail.add(auditLine{Replica: g.name, Identity: identity, Tool: c.Tool, Public: c.Public, Session: c.Session, Client: c.Client, Outcome: o})
		}
		return nil
	}, nil
}

func (g auditGate) Resume(c Call, identity string) func(Outcome) {
	return func(o Outcome) {
		if !g.killed.Load() {
			g.trail.add(auditLine{Replica: g.name, Identity: identity, Tool: c.Tool, Public: c.Public, Session: c.Session, Client: c.Client, Outcome: o, Resumed: true})
		}
	}
}

func (g auditGate) Tasks() (TaskStore, time.Duration) {
	return killableStore{TaskStore: g.ts, killed: g.killed}, g.lease
}

// errKilled is every exchange with the store of a killed replica.
var errKilled = errors.New("the replica was killed")

// killableStore is ts until its replica is killed, then out of reach.
type killableStore struct {
	TaskStore
	killed *atomic.Bool
}

func (s killableStore) PutTask(ctx context.Context, rec store.TaskRecord, opts store.PutOptions) (bool, error) {
	if s.killed.Load() {
		return false, errKilled
	}
	return s.TaskStore.PutTask(ctx, rec, opts)
}

func (s killableStore) GetTask(ctx context.Context, id string) (store.TaskRecord, bool, error) {
	if s.killed.Load() {
		return store.TaskRecord{}, false, errKilled
	}
	return s.TaskStore.GetTask(ctx, id)
}

func (s killableStore) RenewTasks(ctx context.Context, holder string, ids []string, lease, keep time.Duration) ([]string, error) {
	if s.killed.Load() {
		return nil, errKilled
	}
	return s.TaskStore.RenewTasks(ctx, holder, ids, lease, keep)
}

// auditedReplicas serves reg from n stateless gateways sharing tasks in
// one real redis-server (with lease), each with an auditGate writing to
// tr; it returns their base URLs, their kill switches and a store.
func auditedReplicas(t *testing.T, reg *tool.Registry, n int, lease time.Duration, tr *trail) (bases []string, kills []*atomic.Bool, ts *store.Redis) {
	return auditedReplicasWith(t, reg, Options{}, n, lease, tr)
}

// auditedReplicasWith is auditedReplicas of gateways made with base, made
// stateless, authenticating alice and bob, with their auditGate.
func auditedReplicasWith(t *testing.T, reg *tool.Registry, base Options, n int, lease time.Duration, tr *trail) (bases []string, kills []*atomic.Bool, ts *store.Redis) {
	srv, ts := openTaskStore(t)
	for i := range n {
		r, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		killed := &atomic.Bool{}
		opts := base
		opts.Stateless, opts.Authenticate = true, aliceOrBob
		opts.Gate = auditGate{name: string(rune('A' + i)), ts: r, lease: lease, trail: tr, killed: killed}
		bases, kills = append(bases, serveHTTP(t, newGateway(t, reg, opts), opts)), append(kills, killed)
	}
	return bases, kills, ts
}

// The replica running a task is killed while its call runs: the replicas
// left read the task failed once its lease lapsed, and one of them, one
// only, however many read it at once, writes the call's audit line, which
// the killed replica could not: failed, for the identity that made the
// task, naming the call as its replica's Gate saw it, and saying its
// replica was lost. No replica wrote one before: the audit trail lacked
// every call whose replica died.
func TestAuditOfATaskWhoseReplicaWasLost(t *testing.T) {
	block := goTool("block", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	})
	block.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(block); err != nil {
		t.Fatal(err)
	}
	tr := &trail{}
	bases, kills, _ := auditedReplicas(t, reg, 3, 300*time.Millisecond, tr)
	id := createTask(t, &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}, "block")
	kills[0].Store(true)
	var wg sync.WaitGroup
	for _, base := range bases[1:] {
		for range 4 {
			alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret"}
			wg.Go(func() {
				waitFor(t, "the task of the killed replica to fail", func() bool {
					return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"failed"`)
				})
			})
		}
	}
	wg.Wait()
	onlyLostLine(t, tr)
}

// A task's record made before records kept their call still gets its
// call's line when another replica ends it failed: it names what the
// record keeps, the identity.
func TestAuditOfAnOldTaskWhoseReplicaWasLost(t *testing.T) {
	tr := &trail{}
	bases, _, ts := auditedReplicas(t, tool.NewRegistry(), 1, time.Second, tr)
	const id = "0123456789abcdef0123456789abcdee"
	wire := `{"taskId":"` + id + `","status":"working","pollIntervalMs":500}`
	if _, err := ts.PutTask(t.Context(), store.TaskRecord{ID: id, Owner: recordOwner("alice"), Version: 1, Wire: []byte(wire)}, store.PutOptions{Keep: time.Minute, Lease: 20 * time.Millisecond, Holder: "stopped"}); err != nil {
		t.Fatal(err)
	}
	alice := &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}
	waitFor(t, "the task to fail", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"failed"`)
	})
	alice.request("tasks/get", idParams(id))
	want := []auditLine{{Replica: "A", Identity: "alice", Outcome: Outcome{Failed: true, Lost: true}, Resumed: true}}
	if d := cmp.Diff(want, tr.read()); d != "" {
		t.Errorf("the audit trail (-want +got):\n%s", d)
	}
}

// blockingRegistry serves two background tools: "block", which runs
// until its call is cancelled, and "hold", which answers "done" once
// release is closed, if its call was not cancelled first.
func blockingRegistry(t *testing.T, release <-chan struct{}) *tool.Registry {
	reg := tool.NewRegistry()
	for _, name := range []string{"block", "hold"} {
		body := goTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			done := release
			if name == "block" {
				done = nil
			}
			select {
			case <-ctx.Done():
				return tool.Output{}, ctx.Err()
			case <-done:
				return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
			}
		})
		body.Background = true
		if _, err := reg.Register(body); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// The replica running a task is killed, and its lease lapses; before any
// replica reads the task, its client cancels it through the replicas
// left, several at once. The call was lost with its replica before the
// cancel came: the task ends failed as lost, as a read would have found
// it, and one replica, one only, writes the call's line, failed, saying
// its replica was lost. The cancel wrote the record cancelled before,
// and no replica wrote a line for the call.
func TestAuditOfALostTaskCancelled(t *testing.T) {
	const lease = 300 * time.Millisecond
	tr := &trail{}
	bases, kills, _ := auditedReplicas(t, blockingRegistry(t, nil), 3, lease, tr)
	id := createTask(t, &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}, "block")
	kills[0].Store(true)
	time.Sleep(lease + 100*time.Millisecond) // its lease lapses, unread
	var wg sync.WaitGroup
	for _, base := range bases[1:] {
		for range 4 {
			alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret"}
			wg.Go(func() {
				if res := alice.request("tasks/cancel", idParams(id)); res.Error != nil {
					t.Errorf("tasks/cancel: %+v", res.Error)
				}
			})
		}
	}
	wg.Wait()
	alice := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret"}
	if got := string(alice.request("tasks/get", idParams(id)).Result); !strings.Contains(got, `"status":"failed"`) {
		t.Errorf("tasks/get after the cancels: %s, want the task failed as its replica was lost", got)
	}
	onlyLostLine(t, tr)
}

// The replica running two tasks stalls past its lease (its process
// paused: it reaches neither the store nor its trail); another replica
// reads both failed as lost and writes their calls' lines. The stalled
// replica comes back: one call ends as it does (its tool answers), the
// other as the replica's next renewal finds its task ended elsewhere.
// Neither gets a second line: the replica that ended each as lost wrote
// its only one. The returning replica wrote one for each before.
func TestAuditOfAStalledReplicasTasks(t *testing.T) {
	const lease = 300 * time.Millisecond
	release := make(chan struct{})
	tr := &trail{}
	bases, kills, _ := auditedReplicas(t, blockingRegistry(t, release), 2, lease, tr)
	onA := &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}
	ids := map[string]string{"block": createTask(t, onA, "block"), "hold": createTask(t, onA, "hold")}
	kills[0].Store(true) // stalled
	onB := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret"}
	for _, id := range ids {
		waitFor(t, "the task of the stalled replica to fail", func() bool {
			return strings.Contains(string(onB.request("tasks/get", idParams(id)).Result), `"status":"failed"`)
		})
	}
	kills[0].Store(false) // back
	close(release)        // hold's call ends before a renewal stops it
	time.Sleep(lease)     // a renewal stops block's call, and a line for each, were one written, is written by now
	var want []auditLine
	for _, name := range []string{"block", "hold"} {
		want = append(want, auditLine{Replica: "B", Identity: "alice", Tool: name, Public: name, Outcome: Outcome{Failed: true, Lost: true}, Resumed: true})
	}
	got := tr.read()
	slices.SortFunc(got, func(a, b auditLine) int { return strings.Compare(a.Replica+a.Tool, b.Replica+b.Tool) })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the audit trail of two calls (-want +got):\n%s", d)
	}
}

// The replica running a task whose backend's task another replica can
// follow stalls past its lease; another replica takes the task over and
// follows it to its end, writing the call's line. The stalled replica
// comes back, and its call stops at its next renewal (the task is the
// other's now): it writes no line of its own, as it did before, a
// second one for the call.
func TestAuditOfAStalledReplicasTaskTakenOver(t *testing.T) {
	const lease = 300 * time.Millisecond
	h := newHanding("w1")
	reg := tool.NewRegistry()
	if _, err := reg.Register(h.tool("followable")); err != nil {
		t.Fatal(err)
	}
	tr := &trail{}
	bases, kills, ts := auditedReplicas(t, reg, 2, lease, tr)
	id := createTask(t, &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}, "followable")
	waitSignal(t, h.started, "the backend's task")
	waitFor(t, "the record to name the backend's task", func() bool { return len(storedTask(t, ts, id).Backend) > 0 })
	kills[0].Store(true) // stalled
	onB := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret"}
	waitFor(t, "the task to be taken over", func() bool {
		onB.request("tasks/get", idParams(id))
		return len(h.following) > 0
	})
	kills[0].Store(false) // back
	waitSignal(t, h.ended, "the stalled replica's call to stop at its renewal")
	close(h.release)
	waitFor(t, "the task taken over to complete", func() bool {
		return strings.Contains(string(onB.request("tasks/get", idParams(id)).Result), "followed w1")
	})
	time.Sleep(100 * time.Millisecond) // a second line, were one written, is written by now
	want := []auditLine{{Replica: "B", Identity: "alice", Tool: "followable", Public: "followable", Resumed: true}}
	if d := cmp.Diff(want, tr.read()); d != "" {
		t.Errorf("the audit trail of the call (-want +got):\n%s", d)
	}
}

// A task its client cancels through another replica while its own holds
// it gets the one line its own replica writes as the call stops there.
func TestAuditOfATaskCancelledThroughAnotherReplica(t *testing.T) {
	tr := &trail{}
	bases, _, _ := auditedReplicas(t, blockingRegistry(t, nil), 2, 300*time.Millisecond, tr)
	id := createTask(t, &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret"}, "block")
	onB := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret"}
	if res := onB.request("tasks/cancel", idParams(id)); res.Error != nil {
		t.Fatalf("tasks/cancel: %+v", res.Error)
	}
	waitFor(t, "the call to stop on its replica", func() bool { return len(tr.read()) > 0 })
	time.Sleep(100 * time.Millisecond) // a second line, were one written, is written by now
	want := []auditLine{{Replica: "A", Identity: "alice", Tool: "block", Public: "block", Outcome: Outcome{IsError: true}}}
	if d := cmp.Diff(want, tr.read()); d != "" {
		t.Errorf("the audit trail of the call (-want +got):\n%s", d)
	}
}

// onlyLostLine fails t unless tr holds one line, alice's call of block
// failed as lost, written by a replica other than the lost one (A).
func onlyLostLine(t *testing.T, tr *trail) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // a second line, were one written, is written by now
	got := tr.read()
	if len(got) != 1 {
		t.Fatalf("the audit trail has %d lines for the call, want 1: %+v", len(got), got)
	}
	want := auditLine{Replica: got[0].Replica, Identity: "alice", Tool: "block", Public: "block", Outcome: Outcome{Failed: true, Lost: true}, Resumed: true}
	if d := cmp.Diff(want, got[0]); d != "" || want.Replica == "A" {
		t.Errorf("the line of the call whose replica was lost (-want +got):\n%s", d)
	}
}

// cancelWatch is mcppeer's task server, telling on cancels each
// tasks/cancel it is sent, with the task it names.
type cancelWatch struct {
	*mcppeer.TaskFixture
	cancels chan string
}

func (w cancelWatch) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) == nil && req.Method == "tasks/cancel" {
		select {
		case w.cancels <- req.Params.TaskID:
		default:
		}
	}
	w.TaskFixture.ServeHTTP(rw, r)
}

// taskBackend registers, in a new registry, the tools of mcppeer's task
// server over HTTP, and returns the registry and the tasks/cancel the
// server is sent.
func taskBackend(t *testing.T) (*tool.Registry, <-chan string) {
	t.Helper()
	w := cancelWatch{TaskFixture: mcppeer.NewTaskServer(), cancels: make(chan string, 16)}
	t.Cleanup(w.Close)
	hs := httptest.NewServer(w)
	t.Cleanup(hs.Close)
	reg := tool.NewRegistry()
	startClient(t, mcpclient.Config{ServerName: "tasks", Transport: mcpclient.TransportStreamableHTTP, URL: hs.URL}, mcpclient.Options{Registry: reg})
	return reg, w.cancels
}

// The replica running a task whose backend's task another replica can
// follow (a task server over HTTP) is killed, and its lease lapses;
// before any replica reads the task, its client cancels it through the
// replicas left, several at once. The cancel takes the task over, as a
// read would have, and cancels it as a running task is cancelled: the
// backend is sent tasks/cancel for its task, the task reads cancelled,
// and the call gets one audit line, written by the replica that took it
// over. The cancel wrote the record cancelled before, and no more: the
// backend's task ran on, and no replica wrote a line for the call.
func TestAuditOfALostBackendTaskCancelled(t *testing.T) {
	const lease = 300 * time.Millisecond
	reg, cancels := taskBackend(t)
	tr := &trail{}
	bases, kills, ts := auditedReplicas(t, reg, 3, lease, tr)
	name := mcpclient.PublicToolName("tasks", "slow_compute")
	onA := &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret", perRequest: true}
	id := createdTask(t, onA.request("tools/call", `{"name":"`+name+`","arguments":{"seconds":60,"label":"slow"},`+meta2026+`}`), true)
	var ref backendRef
	waitFor(t, "the record to name the backend's task", func() bool {
		return json.Unmarshal(storedTask(t, ts, id).Backend, &ref) == nil && ref.Task != ""
	})
	kills[0].Store(true)
	time.Sleep(lease + 100*time.Millisecond) // its lease lapses, unread
	var wg sync.WaitGroup
	for _, base := range bases[1:] {
		for range 4 {
			alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret", perRequest: true}
			wg.Go(func() {
				if res := alice.request("tasks/cancel", idParams(id)); res.Error != nil {
					t.Errorf("tasks/cancel: %+v", res.Error)
				}
			})
		}
	}
	wg.Wait()
	if got := waitSignal(t, cancels, "the backend to be sent tasks/cancel"); got != ref.Task {
		t.Errorf("the backend was sent tasks/cancel of %q, want its task %q", got, ref.Task)
	}
	alice := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret", perRequest: true}
	if got := string(alice.request("tasks/get", idParams(id)).Result); !strings.Contains(got, `"status":"cancelled"`) {
		t.Errorf("tasks/get after the cancels: %s, want the task cancelled", got)
	}
	waitFor(t, "the call's audit line", func() bool { return len(tr.read()) > 0 })
	time.Sleep(lease) // a second line, were one written, is written by now
	got := tr.read()
	if len(got) != 1 {
		t.Fatalf("the audit trail has %d lines for the call, want 1: %+v", len(got), got)
	}
	if l := got[0]; l.Replica == "A" || l.Identity != "alice" || l.Public != name || !l.Resumed || !l.Outcome.IsError && !l.Outcome.Failed {
		t.Errorf("the line of the cancelled call: %+v, want alice's call of slow_compute, ended in error, written by a replica left", l)
	}
}

// A task made as its backend made its own (relayed), whose replica is
// killed, is taken over by the replica that reads it, which writes the
// call's line as the task completes: it names the call as the killed
// replica's Gate saw it (the tool the client called, served by its raw
// name, and the registry's tool it runs), which the task's record keeps
// from when it was made, as for a task the gateway runs. The record kept
// none: the line named the registry's tool for both.
func TestAuditOfATakenOverRelayedTaskNamesItsCall(t *testing.T) {
	const lease = 300 * time.Millisecond
	reg, _ := taskBackend(t)
	tr := &trail{}
	bases, kills, ts := auditedReplicasWith(t, reg, Options{RawNames: true}, 2, lease, tr)
	onA := &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret", perRequest: true}
	id := createdTask(t, onA.request("tools/call", extCallParams("slow_compute", `{"seconds":1,"label":"tides"}`)), true)
	waitFor(t, "the record to name the backend's task", func() bool { return len(storedTask(t, ts, id).Backend) > 0 })
	kills[0].Store(true)
	onB := &rawHTTP{t: t, endpoint: bases[1] + "/mcp", token: "alice-secret", perRequest: true}
	if got := awaitTask(t, onB, id, "completed"); !strings.Contains(string(got.Result), "computed tides") {
		t.Errorf("the task taken over: %s", got.Result)
	}
	waitFor(t, "the call's audit line", func() bool { return len(tr.read()) > 0 })
	time.Sleep(100 * time.Millisecond) // a second line, were one written, is written by now
	want := []auditLine{{Replica: "B", Identity: "alice", Tool: "slow_compute", Public: mcpclient.PublicToolName("tasks", "slow_compute"), Client: "raw", Resumed: true}}
	if d := cmp.Diff(want, tr.read()); d != "" {
		t.Errorf("the audit trail of the call (-want +got):\n%s", d)
	}
}

// A 2026-07-28 client of the tasks extension, whose task-making calls the
// SDK serves (their sessions never initialized), is named in its task's
// audit line as its request's _meta names it, as in its other calls' and
// any other client's: its tasks' lines named no client.
func TestAuditNamesTheClientOfATasksExtensionClient(t *testing.T) {
	reg := tool.NewRegistry()
	greet := goTool("greet", func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text("hi")}}, nil
	})
	greet.Background = true // a task
	if _, err := reg.Register(greet); err != nil {
		t.Fatal(err)
	}
	tr := &trail{}
	bases, _, _ := auditedReplicas(t, reg, 1, time.Minute, tr)
	c := &rawHTTP{t: t, endpoint: bases[0] + "/mcp", token: "alice-secret", perRequest: true}
	id := createdTask(t, c.request("tools/call", extCallParams("greet", `{}`)), true)
	if got := awaitTask(t, c, id, "completed"); !strings.Contains(string(got.Result), "hi") {
		t.Fatalf("the task: %s", got.Result)
	}
	waitFor(t, "the call's audit line", func() bool { return len(tr.read()) > 0 })
	if got := tr.read(); got[0].Client != "raw" || got[0].Identity != "alice" {
		t.Errorf("the line of a tasks extension client's call: %+v, want it to name the client raw", got)
	}
}
