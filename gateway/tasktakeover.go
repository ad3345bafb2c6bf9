package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tasks taken over by another replica. A shared task whose call the
// backend runs as a task of its own, which another process can follow
// (an MCP server over HTTP: mcpclient tells its id, tool.WithTaskStarted),
// keeps in its record the backend's task id and the tool called. When
// the replica running it stops (its lease lapses, or it gave the lease
// up as it stopped in order: taskhandover.go), the first replica to
// read the task takes it over: it claims the record with a lease of its
// own (a write only over a lapsed lease, so one replica wins), follows
// the backend's task to its end (tool.WithResume), renewing the lease as
// it does for its own tasks, and writes the end. The client, polling any
// replica, sees the task go on and end; nothing is lost. A backend that
// no longer knows the task ends it failed, saying why. A question of the
// backend meanwhile is put to no one (the client that could answer it is
// not this replica's): the backend reads it declined, or the task fails.
// A task whose backend runs no task of its own, or
// runs as a stdio child (gone with its replica), ends failed as before.

// backendRef is what a task's record keeps of its backend's task.
type backendRef struct {
	Tool string `json:"tool"` // the registry's name of the tool called
	Task string `json:"task"` // the backend's task id
}

// takeovers are the backend tasks of the tasks this replica runs, and
// the tasks it took over: the calls that follow a backend's task another
// replica can follow, which this one hands over when it stops
// (taskhandover.go).
type takeovers struct {
	mu      sync.Mutex
	refs    map[string][]byte                  // a running task's backendRef, by task id
	stops   map[string]context.CancelCauseFunc // ends the call of a running task with a backendRef
	running map[string]context.CancelCauseFunc // the tasks taken over, running here
	handed  map[string]bool                    // handed over as the gateway closed: no longer written here
	// writes is held (read) while a task's state is written to the
	// store; the hand-over holds it so that none lands after it.
	writes sync.RWMutex
}

// withBackendTask returns the context of task id's call (an extension
// task of store), which records the backend's task in the task's record
// once the backend made one (recordBackendTask), and can be ended to
// hand the task over.
func (g *Gateway) withBackendTask(ctx context.Context, st *tasks.Store, id, name string) context.Context {
	ctx, stop := context.WithCancelCause(ctx)
	return tool.WithTaskStarted(ctx, func(backendTask string) { g.recordBackendTask(st, id, name, backendTask, stop) })
}

// recordBackendTask records backendTask, the task tool name's backend
// made for task id of st, in the task's record, when another replica
// can follow it (followableElsewhere); stop ends the call that follows
// it here.
func (g *Gateway) recordBackendTask(st *tasks.Store, id, name, backendTask string, stop context.CancelCauseFunc) {
	if !g.followableElsewhere(st, id, backendTask) {
		return
	}
	t := &g.ownerBook.takeovers
	t.mu.Lock()
	if t.refs == nil {
		t.refs, t.stops = map[string][]byte{}, map[string]context.CancelCauseFunc{}
	}
	t.refs[id] = mustJSON(backendRef{Tool: name, Task: backendTask})
	t.stops[id] = stop
	t.mu.Unlock()
	st.Tell(id) // written with the record (shareChanges)
}

// backendOf returns the backendRef of task id running here, nil when
// none; an ended task's is forgotten.
func (g *Gateway) backendOf(id string, ended bool) []byte {
	t := &g.ownerBook.takeovers
	t.mu.Lock()
	defer t.mu.Unlock()
	ref := t.refs[id]
	if ended {
		delete(t.refs, id)
		delete(t.stops, id)
	}
	return ref
}

// takeOver takes over rec, a task of a stopped replica whose backend's
// task another replica can follow, and returns it as it now reads:
// working, followed here, or as another replica that came first left it.
func (g *Gateway) takeOver(ctx context.Context, ts TaskStore, lease time.Duration, rec store.TaskRecord) (store.TaskRecord, error) {
	var ref backendRef
	if err := json.Unmarshal(rec.Backend, &ref); err != nil || ref.Tool == "" || ref.Task == "" {
		return g.failLost(ctx, ts, rec, fmt.Sprintf("the gateway replica running this task stopped before it ended, and the record of its backend's task is unreadable (%q); call the tool again", rec.Backend))
	}
	claim := store.TaskRecord{ID: rec.ID, Owner: rec.Owner, Version: rec.Version + 1, Wire: rewire(rec.Wire, map[string]any{"status": tasks.Working}), Call: rec.Call}
	won, err := ts.PutTask(ctx, claim, store.PutOptions{Keep: taskKeep, Lease: lease, NoLease: true, Holder: g.parked.tag})
	if err != nil {
		g.log.Warn("gateway store: taking a task over", "task", rec.ID, "err", err)
		return rec, storeDown(err)
	}
	if !won {
		got, ok, err := ts.GetTask(ctx, rec.ID)
		if err != nil || !ok || got.Owner != rec.Owner {
			return rec, nil // forgotten since, or unreadable now: as read
		}
		return got, nil
	}
	g.log.Info("gateway store: a task of a stopped replica is taken over, its backend's task followed here", "task", rec.ID, "tool", ref.Tool, "backend_task", ref.Task)
	g.followTakenOver(ts, claim, ref)
	return claim, nil
}

// followTakenOver follows ref, the backend's task of rec, taken over here, on a
// goroutine of its own until it ends (or another replica ends rec:
// renewAll cancels it, or the gateway closes), and writes its end.
func (g *Gateway) followTakenOver(ts TaskStore, rec store.TaskRecord, ref backendRef) {
	b := &g.ownerBook
	b.mu.Lock()
	defer b.mu.Unlock()
	if g.isClosed() {
		g.releaseLeases(ts, []string{rec.ID}) // another replica takes it over
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	t := &b.takeovers
	t.mu.Lock()
	if t.running == nil {
		t.running = map[string]context.CancelCauseFunc{}
	}
	t.running[rec.ID] = cancel
	t.mu.Unlock()
	if !b.renewing {
		b.renewing = true
		b.wg.Go(g.renewLoop)
	}
	b.wg.Go(func() {
		defer cancel(nil)
		go func() {
			select {
			case <-g.done:
				cancel(errClosing)
			case <-ctx.Done():
			}
		}()
		raw, err := g.followBackend(ctx, ref, g.resumeAudit(g.recordedCall(rec, Call{Tool: ref.Tool, Public: ref.Tool}), rec.Owner))
		t.mu.Lock()
		delete(t.running, rec.ID)
		t.mu.Unlock()
		g.endTakenOver(ts, rec, ref, raw, err)
	})
}

// endTakenOver writes the end of rec, taken over here, whose backend's
// task ref ended with raw or err.
func (g *Gateway) endTakenOver(ts TaskStore, rec store.TaskRecord, ref backendRef, raw json.RawMessage, err error) {
	rec.Version, rec.Ended = endedVersion-1, true // newer than any write of the stopped replica
	if err != nil {
		rec.Wire = failedWire(rec.Wire, fmt.Sprintf("the gateway replica running this task stopped before it ended; following its backend's task %s from another replica failed: %v", ref.Task, err))
	} else {
		rec.Wire = rewire(rec.Wire, map[string]any{"status": tasks.Completed, "result": raw})
	}
	t := &g.ownerBook.takeovers
	t.writes.RLock()
	defer t.writes.RUnlock()
	if t.handedOver(rec.ID) {
		return // another replica follows it now, and writes its end
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if _, err := ts.PutTask(ctx, rec, store.PutOptions{Keep: taskKeep, Holder: g.parked.tag}); err != nil {
		g.log.Warn("gateway store: writing the end of a task taken over", "task", rec.ID, "err", err)
	}
}

// followBackend follows the backend's task ref to its result, as the
// call that made it would have returned it, and tells ended how it ended.
func (g *Gateway) followBackend(ctx context.Context, ref backendRef, ended func(Outcome)) (json.RawMessage, error) {
	ctx = tool.WithResume(tool.WithBackground(ctx), ref.Task)
	var kept tool.Result
	res, err := g.run(ctx, ref.Tool, nil, callHow{parked: true, keep: &kept}, &mcp.CallToolParamsRaw{Name: ref.Tool, Arguments: json.RawMessage(`{}`)})
	if kept.Error != nil && kept.Error.Code == tool.CodeAbortedBeforeDispatch {
		g.cancelUndispatched(ctx, ref)
	}
	if errors.Is(context.Cause(ctx), tool.ErrHandedOver) {
		ended(Outcome{HandedOver: true})
	} else {
		ended(Outcome{IsError: res.isError, Failed: err != nil})
	}
	if err != nil {
		return nil, err
	}
	return serverwire.CallResultJSON(res.isError, res.content, res.structured), nil
}

// cancelUndispatched cancels the backend's task ref where it runs when
// its following call, stopped before it was dispatched (a cancel that
// came as the task was taken over), never reached the backend: the
// tool's body, given the ended context, cancels the task it resumes, as
// a stopped follow does. One handed over, or stopped as the gateway
// closes, is left running for another replica to follow.
func (g *Gateway) cancelUndispatched(ctx context.Context, ref backendRef) {
	if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
		return
	}
	if t, ok := g.reg.Get(ref.Tool); ok {
		_, _ = t.Execute(ctx, json.RawMessage(`{}`)) // an error is the cancellation's
	}
}

// resumeAudit is what records the end of c, begun by the owner of a
// task record on a replica that stopped: the Gate's Resumer, when it has
// one.
func (g *Gateway) resumeAudit(c Call, owner string) func(Outcome) {
	r, ok := gateAs[Resumer](g.gate)
	if !ok {
		return func(Outcome) {}
	}
	identity, _ := strings.CutPrefix(owner, recordOwner(""))
	return r.Resume(c, identity)
}

// takenOver returns the ids of the tasks taken over and running here.
func (g *Gateway) takenOver() []string {
	t := &g.ownerBook.takeovers
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.running))
	for id := range t.running {
		ids = append(ids, id)
	}
	return ids
}

// stopTakenOver stops following task id, taken over here, and reports
// whether it was.
func (g *Gateway) stopTakenOver(id string) bool {
	t := &g.ownerBook.takeovers
	t.mu.Lock()
	cancel := t.running[id]
	t.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
	return cancel != nil
}
