package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/redis/go-redis/v9"
)

// sharedGate lets every call through and shares tasks in a store, as the
// gateway entry's Keeper does with a store configured.
type sharedGate struct {
	ts    TaskStore
	lease time.Duration
}

func (sharedGate) Enter(ctx context.Context, _ Call) (context.Context, func(Outcome) error, error) {
	return ctx, func(Outcome) error { return nil }, nil
}

func (s sharedGate) Tasks() (TaskStore, time.Duration) { return s.ts, s.lease }

// SessionOwners shares the sessions (and routes what a replica gave its
// clients back to it) in the same store, each replica reached at the
// address its clients reach it at.
func (s sharedGate) SessionOwners() (SessionOwners, string) {
	if owners, ok := s.ts.(SessionOwners); ok {
		return owners, ""
	}
	return nil, ""
}

// twoReplicas serves reg from two stateless gateways sharing tasks in a
// real redis-server, with lease; it returns their base URLs and the store.
func twoReplicas(t *testing.T, reg *tool.Registry, lease time.Duration) (a, b string, ts *store.Redis) {
	_, a, b, ts = replicaPair(t, reg, Options{Stateless: true, Authenticate: aliceOrBob}, lease)
	return a, b, ts
}

// replicaPair serves reg from two gateways made with opts sharing tasks
// and sessions in a real redis-server (sharedGate, with lease); it
// returns the server, their base URLs and the first one's store.
func replicaPair(t *testing.T, reg *tool.Registry, opts Options, lease time.Duration) (srv *mcptest.RedisServer, a, b string, ts *store.Redis) {
	srv, ts = openTaskStore(t)
	var bases []string
	for i := range 2 {
		r := ts // the second replica has a client of its own
		if i == 1 {
			var err error
			if r, err = store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
		}
		opts.Gate = sharedGate{ts: r, lease: lease}
		bases = append(bases, serveHTTP(t, newGateway(t, reg, opts), opts))
	}
	return srv, bases[0], bases[1], ts
}

// createTask calls name as a task of the extension through c and returns
// the task's id.
func createTask(t *testing.T, c *rawHTTP, name string) string {
	t.Helper()
	created := c.request("tools/call", `{"name":"`+name+`","arguments":{},`+declaresTasks+`}`)
	var task struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(created.Result, &task); err != nil || task.ResultType != "task" || task.TaskID == "" {
		t.Fatalf("created: %s %+v", created.Result, created.Error)
	}
	return task.TaskID
}

// A task made through one replica is read through the other: its
// question, then its result once the replica running it got the answer,
// sent through the other replica (which forwards it: a task's id names
// its replica); another identity gets what a made-up id gets, on either
// replica. Answers sent to a replica not running the task used to be
// refused.
func TestGatewaySharedTasksAcrossReplicas(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", true)); err != nil {
		t.Fatal(err)
	}
	a, b, _ := twoReplicas(t, reg, time.Minute)
	aliceA := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	aliceB := &rawHTTP{t: t, endpoint: b + "/mcp", token: "alice-secret"}
	id := createTask(t, aliceA, "ask")
	waitFor(t, "the question read through the other replica", func() bool {
		return strings.Contains(string(aliceB.request("tasks/get", idParams(id)).Result), `"inputRequests":{"q1":{"method":"elicitation/create"`)
	})
	for _, base := range []string{a, b} {
		answeredAsUnknown(t, "bob", &rawHTTP{t: t, endpoint: base + "/mcp", token: "bob-secret"}, id, "tasks/get", "tasks/update", "tasks/cancel")
	}
	answer := `{"taskId":"` + id + `","inputResponses":{"q1":{"action":"accept","content":{"pick":"owl"}}},` + declaresTasks + `}`
	if m := aliceB.request("tasks/update", answer); m.Error != nil {
		t.Fatalf("the answer, sent to the other replica: %+v", m.Error)
	}
	waitFor(t, "the result read through the other replica", func() bool {
		got := string(aliceB.request("tasks/get", idParams(id)).Result)
		return strings.Contains(got, `"status":"completed"`) && strings.Contains(got, `\"pick\":\"owl\"`)
	})
}

// A task cancelled through another replica than the one running it is
// cancelled for every reader at once, and its call stops on its replica
// at the next renewal of the leases.
func TestGatewaySharedTaskCancelledElsewhere(t *testing.T) {
	stopped := make(chan struct{})
	block := goTool("block", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		<-ctx.Done()
		close(stopped)
		return tool.Output{}, ctx.Err()
	})
	block.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(block); err != nil {
		t.Fatal(err)
	}
	a, b, _ := twoReplicas(t, reg, 300*time.Millisecond)
	aliceA := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	aliceB := &rawHTTP{t: t, endpoint: b + "/mcp", token: "alice-secret"}
	id := createTask(t, aliceA, "block")
	if m := aliceB.request("tasks/cancel", idParams(id)); string(m.Result) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel through the other replica: %s %+v; want the extension's bare ack", m.Result, m.Error)
	}
	if m := aliceB.request("tasks/get", idParams(id)); !strings.Contains(string(m.Result), `"status":"cancelled"`) {
		t.Errorf("the cancelling replica reads %s %+v", m.Result, m.Error)
	}
	if m := aliceA.request("tasks/get", idParams(id)); !strings.Contains(string(m.Result), `"status":"cancelled"`) {
		t.Errorf("the running replica reads %s %+v", m.Result, m.Error)
	}
	waitSignal(t, stopped, "the call to stop on the replica running it")
}

// A task still working whose lease lapsed (the replica running it
// stopped without a word) reads as failed, saying why, on any replica.
func TestGatewaySharedTaskOfStoppedReplica(t *testing.T) {
	a, _, ts := twoReplicas(t, tool.NewRegistry(), 2*time.Second)
	const id = "0123456789abcdef0123456789abcdee"
	wire := `{"taskId":"` + id + `","status":"working","pollIntervalMs":500}`
	if _, err := ts.PutTask(t.Context(), store.TaskRecord{ID: id, Owner: recordOwner("alice"), Version: 1, Wire: []byte(wire)}, store.PutOptions{Keep: time.Minute, Lease: 20 * time.Millisecond, Holder: "stopped"}); err != nil {
		t.Fatal(err)
	}
	alice := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	var got string
	waitFor(t, "the task to fail", func() bool {
		got = string(alice.request("tasks/get", idParams(id)).Result)
		return strings.Contains(got, `"status":"failed"`)
	})
	if !strings.Contains(got, "the gateway replica running this task stopped before it ended (its 2s lease was not renewed)") || !strings.Contains(got, `"error":{"code":-32603`) {
		t.Errorf("the failed task: %s", got)
	}
}

// switchGate shares tasks in a store once one is set, as a Keeper does
// after a reload that adds the store.
type switchGate struct {
	sharedGate
	on *atomic.Bool
}

func (s switchGate) Tasks() (TaskStore, time.Duration) {
	if !s.on.Load() {
		return nil, 0
	}
	return s.sharedGate.Tasks()
}

// SessionOwners follows the switch too, as the Keeper's store does.
func (s switchGate) SessionOwners() (SessionOwners, string) {
	if !s.on.Load() {
		return nil, ""
	}
	return s.sharedGate.SessionOwners()
}

// A task made before the config had a store is still answered by its
// replica once it has one; the identity's next task is shared.
func TestGatewaySharedTasksAfterReload(t *testing.T) {
	reg := askRegistry(t)
	_, r := openTaskStore(t)
	var on atomic.Bool
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: switchGate{sharedGate{ts: r, lease: time.Minute}, &on}}
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, newGateway(t, reg, opts), opts) + "/mcp", token: "alice-secret"}
	before := createTask(t, alice, "ask")
	on.Store(true)
	waitFor(t, "the task made before the store to ask", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(before)).Result), `"inputRequests"`)
	})
	if _, ok, _ := r.GetTask(t.Context(), before); ok {
		t.Error("a task made before the store is in it")
	}
	after := createTask(t, alice, "ask")
	if rec, ok, err := r.GetTask(t.Context(), after); !ok || err != nil || rec.Owner != recordOwner("alice") {
		t.Errorf("the task made with the store: %+v %v %v", rec, ok, err)
	}
	for _, id := range []string{before, after} {
		declineToCompletion(t, alice, id)
	}
}

// declineToCompletion declines the question of c's task id, once it
// asks, and waits for the task to complete.
func declineToCompletion(t *testing.T, c *rawHTTP, id string) {
	t.Helper()
	waitFor(t, "the task to ask", func() bool {
		return strings.Contains(string(c.request("tasks/get", idParams(id)).Result), `"inputRequests"`)
	})
	if m := c.request("tasks/update", `{"taskId":"`+id+`","inputResponses":{"q1":{"action":"decline"}},`+declaresTasks+`}`); m.Error != nil {
		t.Errorf("answering %s: %+v", id, m.Error)
	}
	waitFor(t, "the task to complete", func() bool {
		return strings.Contains(string(c.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
	})
}

// askRegistry is a registry of one task tool that asks, ask.
func askRegistry(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", true)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// openTaskStore starts a redis-server and opens a store in it, closed
// when the test ends.
func openTaskStore(t testing.TB) (*mcptest.RedisServer, *store.Redis) {
	srv := mcptest.StartRedis(t)
	r, err := store.OpenRedis(context.Background(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return srv, r
}

// With the store down, a new task is refused, saying why, and none is
// kept; a read fails the same way; once the store is back, tasks
// are made and read again.
func TestGatewaySharedTasksStoreDown(t *testing.T) {
	reg := askRegistry(t)
	srv, r := openTaskStore(t)
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: sharedGate{ts: r, lease: time.Minute}}
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, newGateway(t, reg, opts), opts) + "/mcp", token: "alice-secret"}
	srv.Stop()
	for range maxSessionTasks + 1 { // more than an identity's tasks: none is kept
		m := alice.request("tools/call", `{"name":"ask","arguments":{},`+declaresTasks+`}`)
		if m.Error == nil || !strings.Contains(m.Error.Message, "the gateway's task store cannot be reached") {
			t.Fatalf("a task with the store down: %s %+v", m.Result, m.Error)
		}
	}
	if m := alice.request("tasks/get", idParams("0123456789abcdef0123456789abcdef")); m.Error == nil || !strings.Contains(m.Error.Message, "the gateway's task store cannot be reached") {
		t.Errorf("tasks/get with the store down: %s %+v", m.Result, m.Error)
	}
	srv.Start()
	var id string
	waitFor(t, "a task once the store is back", func() bool {
		m := alice.request("tools/call", `{"name":"ask","arguments":{},`+declaresTasks+`}`)
		var task struct{ TaskID string }
		json.Unmarshal(m.Result, &task)
		id = task.TaskID
		return id != ""
	})
	declineToCompletion(t, alice, id)
}

// Shared or not, an identity holds at most maxSessionTasks tasks on a
// replica, ended ones included until dismissed: it cannot fill the store
// with results. A dismissed task (tasks/cancel) frees its place, and its
// record reads as it ended.
func TestGatewaySharedTasksBounded(t *testing.T) {
	quick := goTool("quick", textBody("done"))
	quick.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(quick); err != nil {
		t.Fatal(err)
	}
	a, _, _ := twoReplicas(t, reg, time.Minute)
	alice := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	var ids []string
	for range maxSessionTasks {
		id := createTask(t, alice, "quick")
		waitFor(t, "the task to complete", func() bool {
			return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
		})
		ids = append(ids, id)
	}
	call := `{"name":"quick","arguments":{},` + declaresTasks + `}`
	if m := alice.request("tools/call", call); m.Error == nil || !strings.Contains(m.Error.Message, "too many tasks in flight (at most 16)") {
		t.Fatalf("a task more than an identity holds: %s %+v", m.Result, m.Error)
	}
	if m := alice.request("tasks/cancel", idParams(ids[0])); string(m.Result) != `{"resultType":"complete"}` {
		t.Errorf("dismissing a completed task: %s %+v; want the extension's bare ack", m.Result, m.Error)
	}
	if m := alice.request("tasks/get", idParams(ids[0])); !strings.Contains(string(m.Result), `"status":"completed"`) {
		t.Errorf("a dismissed completed task reads %s %+v", m.Result, m.Error)
	}
	createTask(t, alice, "quick")
}

// Redis lost, then back empty: a task that ended meanwhile is written
// again at the next renewal and reads completed; a task still running,
// whose record is gone, is written again by its replica at the next
// renewal and goes on, read working and then completed with its result.
// Its replica used to cancel it (its call stopped, its result lost) for a
// loss that was the store's.
func TestGatewaySharedTasksRedisRestarted(t *testing.T) {
	release, more := make(chan struct{}), make(chan struct{})
	var stopped atomic.Bool
	finish := goTool("finish", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-release:
			return tool.Output{Content: []tool.Content{tool.Text("finished")}}, nil
		case <-ctx.Done():
			return tool.Output{}, ctx.Err()
		}
	})
	hold := goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-more:
			return tool.Output{Content: []tool.Content{tool.Text("held to the end")}}, nil
		case <-ctx.Done():
			stopped.Store(true)
			return tool.Output{}, ctx.Err()
		}
	})
	finish.Background, hold.Background = true, true
	reg := tool.NewRegistry()
	if _, err := reg.Register(finish, hold); err != nil {
		t.Fatal(err)
	}
	srv, r := openTaskStore(t)
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: sharedGate{ts: r, lease: 600 * time.Millisecond}}
	g := newGateway(t, reg, opts)
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, g, opts) + "/mcp", token: "alice-secret"}
	ended, running := createTask(t, alice, "finish"), createTask(t, alice, "hold")
	srv.Stop()
	close(release)
	waitFor(t, "the task to end with Redis down", func() bool { return len(g.ownerTasks("alice").store.Running()) == 1 })
	srv.Start()
	waitFor(t, "the task that ended while Redis was down to read completed", func() bool {
		got := string(alice.request("tasks/get", idParams(ended)).Result)
		return strings.Contains(got, `"status":"completed"`) && strings.Contains(got, "finished")
	})
	waitFor(t, "the running task's record to be written again", func() bool {
		got := alice.request("tasks/get", idParams(running))
		if strings.Contains(string(got.Result), `"status":"cancelled"`) {
			t.Fatalf("the running task, its record lost with Redis, reads %s", got.Result)
		}
		return strings.Contains(string(got.Result), `"status":"working"`)
	})
	time.Sleep(time.Second) // renewals go on: the task is not stopped
	if stopped.Load() {
		t.Fatal("the running task's call was stopped")
	}
	close(more)
	waitFor(t, "the running task to complete with its result", func() bool {
		got := string(alice.request("tasks/get", idParams(running)).Result)
		return strings.Contains(got, `"status":"completed"`) && strings.Contains(got, "held to the end")
	})
}

// A result larger than the store keeps ends the task failed, saying so,
// on every replica: never a record that some replicas cannot read.
func TestGatewaySharedTaskResultTooLarge(t *testing.T) {
	big := goTool("big", textBody(strings.Repeat("x", store.MaxTaskRecord)))
	big.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(big); err != nil {
		t.Fatal(err)
	}
	a, b, _ := twoReplicas(t, reg, time.Minute)
	id := createTask(t, &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}, "big")
	aliceB := &rawHTTP{t: t, endpoint: b + "/mcp", token: "alice-secret"}
	var got string
	waitFor(t, "the task to end", func() bool {
		got = string(aliceB.request("tasks/get", idParams(id)).Result)
		return !strings.Contains(got, `"status":"working"`)
	})
	if !strings.Contains(got, `"status":"failed"`) || !strings.Contains(got, "is larger than the gateway's store keeps (1048576 bytes)") || len(got) > 4096 {
		t.Errorf("the task whose result is too large: %.300s", got)
	}
}

// An identity that makes tasks, waits for their ends and dismisses them,
// in a loop, holds no more records in the store than the replica keeps
// of its dismissed tasks: each dismissed task the replica forgets (past
// maxSessionTasks of them) loses its record in the store as it is
// dismissed, not at the next renewal (a long lease's renewals are minutes
// apart) nor after taskKeep.
func TestGatewayDismissedTasksLeaveTheStore(t *testing.T) {
	quick := goTool("quick", textBody("done"))
	quick.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(quick); err != nil {
		t.Fatal(err)
	}
	a, _, ts := twoReplicas(t, reg, time.Hour)
	alice := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	var ids []string
	for range 3 * maxSessionTasks {
		id := createTask(t, alice, "quick")
		waitFor(t, "the task to complete", func() bool {
			return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
		})
		if m := alice.request("tasks/cancel", idParams(id)); m.Error != nil {
			t.Fatalf("dismissing a completed task: %+v", m.Error)
		}
		ids = append(ids, id)
	}
	kept := func() (n int) {
		for _, id := range ids {
			if _, ok, err := ts.GetTask(t.Context(), id); err != nil {
				t.Fatal(err)
			} else if ok {
				n++
			}
		}
		return n
	}
	if n := kept(); n > maxSessionTasks {
		t.Errorf("%d of %d dismissed tasks keep their records in the store, want at most %d", n, len(ids), maxSessionTasks)
	}
	last := ids[len(ids)-1]
	if m := alice.request("tasks/get", idParams(last)); !strings.Contains(string(m.Result), `"status":"completed"`) {
		t.Errorf("the last dismissed task reads %s %+v, want it completed still", m.Result, m.Error)
	}
}

// A replica whose lease on a task it runs lapsed (it stalled past it,
// or the store lost the key) and nobody took it over does not end or
// take over its own task when asked of it: the task runs on, and the
// next renewal takes the lease again.
func TestGatewayOwnLapsedTaskRunsOn(t *testing.T) {
	release := make(chan struct{})
	block := goTool("block", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-release:
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		case <-ctx.Done():
			return tool.Output{}, ctx.Err()
		}
	})
	block.Background = true
	reg := tool.NewRegistry()
	if _, err := reg.Register(block); err != nil {
		t.Fatal(err)
	}
	srv, ts := openTaskStore(t)
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: sharedGate{ts: ts, lease: time.Minute}}
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, newGateway(t, reg, opts), opts) + "/mcp", token: "alice-secret"}
	id := createTask(t, alice, "block")
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rc.Close()
	if n, err := rc.Del(t.Context(), t.Name()+":task:"+id+":lease").Result(); n != 1 || err != nil {
		t.Fatalf("dropping the task's lease: %d, %v", n, err)
	}
	if m := alice.request("tasks/get", idParams(id)); !strings.Contains(string(m.Result), `"status":"working"`) {
		t.Errorf("the replica's own task, its lease lapsed, reads %s %+v; want it working", m.Result, m.Error)
	}
	close(release)
	waitFor(t, "the task to complete", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
	})
}

// Redis restarts empty while a task runs; its client, polling the
// replica running it (as affinity sends it), reads it working and can
// cancel it at once: that replica writes the record again as it is asked
// for it, not at its next renewal, a third of the lease later. Until
// then it answered "no task" for its own running task, and refused its
// cancel so.
func TestGatewaySharedTaskReadOnItsReplicaAfterRedisRestartedEmpty(t *testing.T) {
	reg := blockingRegistry(t, nil)
	srv, r := openTaskStore(t)
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: sharedGate{ts: r, lease: time.Minute}}
	g := newGateway(t, reg, opts)
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, g, opts) + "/mcp", token: "alice-secret"}
	read, cancelled := createTask(t, alice, "block"), createTask(t, alice, "block")
	srv.Stop()
	srv.Start()
	if got := alice.request("tasks/get", idParams(read)); !strings.Contains(string(got.Result), `"status":"working"`) {
		t.Errorf("the running task, read on its replica once Redis restarted empty: %s %+v", got.Result, got.Error)
	}
	if got := alice.request("tasks/cancel", idParams(cancelled)); got.Error != nil {
		t.Errorf("the running task, cancelled on its replica once Redis restarted empty: %+v", got.Error)
	}
	if got := alice.request("tasks/get", idParams(cancelled)); !strings.Contains(string(got.Result), `"status":"cancelled"`) {
		t.Errorf("the task cancelled: %s %+v", got.Result, got.Error)
	}
}
