package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// handing is a task tool whose backend makes a task of each call that
// another process can follow by backendTask ("" when none can, as a
// stdio child's), and follows it until the call ends, sending why on
// ended; a call that resumes backendTask (another replica following it)
// completes with "followed <id>" once release is closed. started tells
// each new call once the backend made its task, following each call that
// resumes it (the first four: a call is never held up by it).
type handing struct {
	backendTask    string
	started, ended chan error
	following      chan struct{}
	release        chan struct{}
}

func newHanding(backendTask string) *handing {
	return &handing{backendTask: backendTask, started: make(chan error, 4), ended: make(chan error, 4), following: make(chan struct{}, 4), release: make(chan struct{})}
}

func (h *handing) tool(name string) tool.Tool {
	work := goTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		if id := tool.ResumeFrom(ctx); id != "" {
			select {
			case h.following <- struct{}{}:
			default:
			}
			select {
			case <-h.release:
				return tool.Output{Content: []tool.Content{tool.Text("followed " + id)}}, nil
			case <-ctx.Done():
				h.ended <- context.Cause(ctx)
				return tool.Output{}, ctx.Err()
			}
		}
		tool.TaskStarted(ctx, h.backendTask)
		h.started <- nil
		<-ctx.Done()
		h.ended <- context.Cause(ctx)
		return tool.Output{}, ctx.Err()
	})
	work.Background = true
	return work
}

// storedTask reads task id's record, failing t when there is none.
func storedTask(t *testing.T, ts *store.Redis, id string) store.TaskRecord {
	t.Helper()
	rec, ok, err := ts.GetTask(t.Context(), id)
	if err != nil || !ok {
		t.Fatalf("task %s's record: %v, found %v", id, err, ok)
	}
	return rec
}

// A replica that stops in order (Close) hands over a task whose
// backend's task another replica can follow: its call stops without
// cancelling the backend's task (tool.ErrHandedOver), its record stays
// working with its lease given up at once (the lease is a minute: no
// lapse explains it), and the next replica to read it takes it over and
// completes it. A task whose backend's task no other process can follow
// (a stdio child's) is cancelled, and ends saying so; so is one its
// client cancels.
func TestGatewayCloseHandsOverFollowableTasks(t *testing.T) {
	followable, child, dismissed := newHanding("w1"), newHanding(""), newHanding("w2")
	reg := tool.NewRegistry()
	for name, h := range map[string]*handing{"followable": followable, "child": child, "dismissed": dismissed} {
		if _, err := reg.Register(h.tool(name)); err != nil {
			t.Fatal(err)
		}
	}
	_, ts := openTaskStore(t)
	gate := &outcomeGate{sharedGate: sharedGate{ts: ts, lease: time.Minute}, ended: map[string]Outcome{}, resumed: map[string]Outcome{}}
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: gate}
	stopping := newGateway(t, reg, opts)
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, stopping, opts) + "/mcp", token: "alice-secret"}
	handed, cancelled := createTask(t, alice, "followable"), createTask(t, alice, "child")
	waitSignal(t, followable.started, "the followable backend's task")
	waitSignal(t, child.started, "the child's task")
	waitFor(t, "the record to name the backend's task", func() bool { return len(storedTask(t, ts, handed).Backend) > 0 })
	// A client's tasks/cancel still cancels the backend's task.
	byClient := createTask(t, alice, "dismissed")
	waitSignal(t, dismissed.started, "the backend's task to cancel")
	alice.request("tasks/cancel", idParams(byClient))
	if cause := waitSignal(t, dismissed.ended, "the cancelled call to stop"); errors.Is(cause, tool.ErrHandedOver) || cause == nil {
		t.Errorf("the task the client cancelled: its call ended with %v, want it cancelled", cause)
	}

	if err := stopping.Close(); err != nil {
		t.Fatal(err)
	}
	if cause := waitSignal(t, followable.ended, "the followable call to stop"); !errors.Is(cause, tool.ErrHandedOver) {
		t.Errorf("the followable task's call ended with %v, want it handed over (its backend's task not cancelled)", cause)
	}
	if cause := waitSignal(t, child.ended, "the child's call to stop"); errors.Is(cause, tool.ErrHandedOver) || cause == nil {
		t.Errorf("the child's task's call ended with %v, want it cancelled", cause)
	}
	// The Gate (the audit trail) is told the call was handed over, not
	// that it ended in error; the cancelled one ended in error.
	if o := gate.outcome("followable"); o != (Outcome{HandedOver: true}) {
		t.Errorf("the handed-over call's outcome: %+v, want handed over", o)
	}
	if o := gate.outcome("child"); o.HandedOver || !o.IsError && !o.Failed {
		t.Errorf("the cancelled call's outcome: %+v, want an error", o)
	}
	rec := storedTask(t, ts, handed)
	if rec.Ended || rec.Leased || !strings.Contains(string(rec.Wire), `"status":"working"`) || string(rec.Backend) != `{"tool":"followable","task":"w1"}` {
		t.Errorf("the task handed over: ended %v, leased %v, %s, backend %s; want working, its lease given up, its backend kept", rec.Ended, rec.Leased, rec.Wire, rec.Backend)
	}
	if rec := storedTask(t, ts, cancelled); !rec.Ended || !strings.Contains(string(rec.Wire), "tool call cancelled: "+errClosing.Error()) {
		t.Errorf("the child's task: ended %v, %s; want it ended, saying the gateway is shutting down", rec.Ended, rec.Wire)
	}

	other := &rawHTTP{t: t, endpoint: serveHTTP(t, newGateway(t, reg, opts), opts) + "/mcp", token: "alice-secret"}
	if got := string(other.request("tasks/get", idParams(handed)).Result); !strings.Contains(got, `"status":"working"`) {
		t.Fatalf("the task handed over, read through another replica: %s", got)
	}
	close(followable.release)
	waitFor(t, "the task handed over to complete", func() bool {
		return strings.Contains(string(other.request("tasks/get", idParams(handed)).Result), "followed w1")
	})
}

// A replica that took a task over hands it over again when it stops in
// order: its following stops without cancelling the backend's task, and
// the record is left working, its lease given up.
func TestGatewayCloseHandsOverTakenOverTask(t *testing.T) {
	h := newHanding("w1")
	reg := tool.NewRegistry()
	if _, err := reg.Register(h.tool("work")); err != nil {
		t.Fatal(err)
	}
	_, ts := openTaskStore(t)
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: sharedGate{ts: ts, lease: time.Minute}}
	taker := newGateway(t, reg, opts)
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, taker, opts) + "/mcp", token: "alice-secret"}
	const id = "0123456789abcdef0123456789abcde4"
	strandTask(t, ts, id, "w1")
	waitFor(t, "the task to be taken over", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"working"`)
	})
	waitFor(t, "the taker's lease", func() bool { return storedTask(t, ts, id).Leased })
	// Its following runs on a goroutine of its own: Close before its call
	// starts would refuse the call, and no call would stop handed over.
	waitSignal(t, h.following, "the taker to follow the task")
	if err := taker.Close(); err != nil {
		t.Fatal(err)
	}
	if cause := waitSignal(t, h.ended, "the following to stop"); !errors.Is(cause, tool.ErrHandedOver) {
		t.Errorf("the following of the task taken over ended with %v, want it handed over", cause)
	}
	if rec := storedTask(t, ts, id); rec.Ended || rec.Leased || !strings.Contains(string(rec.Wire), `"status":"working"`) {
		t.Errorf("the task taken over, then handed over: ended %v, leased %v, %s", rec.Ended, rec.Leased, rec.Wire)
	}
}

// Without a store no other replica can read a task: Close cancels a
// task whose backend's task another process could follow, as any other.
func TestGatewayCloseWithoutStoreCancels(t *testing.T) {
	h := newHanding("w1")
	reg := tool.NewRegistry()
	if _, err := reg.Register(h.tool("work")); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, Authenticate: aliceOrBob}
	g := newGateway(t, reg, opts)
	createTask(t, &rawHTTP{t: t, endpoint: serveHTTP(t, g, opts) + "/mcp", token: "alice-secret"}, "work")
	waitSignal(t, h.started, "the backend's task")
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if cause := waitSignal(t, h.ended, "the call to stop"); errors.Is(cause, tool.ErrHandedOver) || cause == nil {
		t.Errorf("the task's call ended with %v, want it cancelled", cause)
	}
}

// A session's task is the session's alone, never in the store, even when
// the config has one: no other replica can read it, so Close cancels it
// though its backend's task could be followed elsewhere.
func TestGatewayCloseCancelsSessionTasks(t *testing.T) {
	h := newHanding("w1")
	reg := tool.NewRegistry()
	if _, err := reg.Register(h.tool("work")); err != nil {
		t.Fatal(err)
	}
	_, ts := openTaskStore(t)
	g := newGateway(t, reg, Options{Gate: sharedGate{ts: ts, lease: time.Minute}})
	c := connectRawInit(t, "", g.ServeStdio)
	waitFor(t, "the tool served", func() bool {
		return strings.Contains(string(c.request("tools/list", `{`+meta2026+`}`).Result), `"work"`)
	})
	if created := c.request("tools/call", `{"name":"work","arguments":{},`+meta2026+`}`); !strings.Contains(string(created.Result), `"resultType":"task"`) {
		t.Fatalf("created: %s %+v", created.Result, created.Error)
	}
	waitSignal(t, h.started, "the backend's task")
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if cause := waitSignal(t, h.ended, "the call to stop"); errors.Is(cause, tool.ErrHandedOver) || cause == nil {
		t.Errorf("the session's task's call ended with %v, want it cancelled", cause)
	}
}

// outcomeGate is sharedGate recording how each tool's last call ended,
// and the calls resumed for another replica ("identity tool", Resume).
type outcomeGate struct {
	sharedGate
	mu      sync.Mutex
	ended   map[string]Outcome
	resumed map[string]Outcome
}

func (g *outcomeGate) Resume(c Call, identity string) func(Outcome) {
	return func(o Outcome) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.resumed[identity+" "+c.Tool] = o
	}
}

func (g *outcomeGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	return ctx, func(o Outcome) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.ended[c.Tool] = o
		return nil
	}, nil
}

func (g *outcomeGate) outcome(name string) Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended[name]
}
