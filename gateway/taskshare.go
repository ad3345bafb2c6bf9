package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
)

// Tasks shared by the replicas of a stateless gateway. When the Gate has
// a store (SharedTasks: the gateway entry's store), each extension task
// of stateless mode is written there as it changes, by the replica that
// runs it (its owner's tasks.Store tells each change), with the identity
// that owns it; tasks/get and tasks/cancel are answered from there by
// any replica, and another identity's task is "no task", as an unknown
// id is. The running replica renews a lease on its tasks; a replica that
// finds a task still working whose lease lapsed ends it failed (its
// replica stopped, and the call with it), unless the backend runs the
// call as a task of its own that another replica can follow: then it
// takes the task over (tasktakeover.go); a replica stopped in order
// hands such tasks over at once (taskhandover.go). A task that another
// replica ended (cancelled) is stopped by
// its running replica at its next renewal. A question of a task is still
// answered (tasks/update) by the replica running it. Without a store,
// tasks stay in the process, as before.

// TaskStore keeps the tasks' records the replicas share (store.Redis).
type TaskStore interface {
	PutTask(ctx context.Context, rec store.TaskRecord, opts store.PutOptions) (bool, error)
	GetTask(ctx context.Context, id string) (store.TaskRecord, bool, error)
	RenewTasks(ctx context.Context, holder string, ids []string, lease, keep time.Duration) ([]string, error)
	ReleaseTasks(ctx context.Context, holder string, ids []string) error
	DropTasks(ctx context.Context, ids []string) error
}

// SharedTasks is implemented by a Gate whose config shares tasks across
// replicas: Tasks returns the store and the lease a running replica
// holds a task for, or nil when tasks stay in the process.
type SharedTasks interface {
	Tasks() (TaskStore, time.Duration)
}

// storeWait bounds one exchange with the task store on a request's path.
const storeWait = 2 * time.Second

// defaultLease is how often (a third of it) the leases are looked at
// while the config has no store.
const defaultLease = 15 * time.Second

// endedVersion is the version of a record another replica ended: newer
// than any the running replica writes.
const endedVersion = math.MaxInt64

// sharedTasks returns the Gate's task store and lease, nil when it has
// none.
func (g *Gateway) sharedTasks() (TaskStore, time.Duration) {
	if s, ok := gateAs[SharedTasks](g.gate); ok {
		return s.Tasks()
	}
	return nil, 0
}

// recordOwner is owner as a record names it: never empty (the anonymous
// identity is "").
func recordOwner(owner string) string { return "identity:" + owner }

// sharingTasks returns the extension tasks of owner, each shared when
// it starts while the config has a store (shareChanges).
func (g *Gateway) sharingTasks(owner string, kept func(id string)) *sessionTasks {
	return newTasksWith(tasks.StoreOptions{Extension: true, Changed: g.shareChanges(owner, kept),
		Tells:    func() bool { ts, _ := g.sharedTasks(); return ts != nil },
		IDPrefix: tagged(g.parked.tag)})
}

// shareChanges returns the Changed of owner's tasks: each change written
// to the task store when there is one, and a task whose end is written
// there told so (kept), so that a replica keeps no result the store has
// (it writes again, at each renewal, the ends it could not write). An
// ended task still counts against the identity's tasks on the replica
// that ran it until it is dismissed or its ttl passes, as without a
// store: an identity cannot fill the store with results.
func (g *Gateway) shareChanges(owner string, kept func(id string)) func(tasks.Snapshot) error {
	return func(snap tasks.Snapshot) error {
		backend := g.backendOf(snap.ID, snap.Ended) // forgotten at the end, store or not
		ts, lease := g.sharedTasks()
		if ts == nil {
			return nil
		}
		t := &g.ownerBook.takeovers
		t.writes.RLock()
		defer t.writes.RUnlock()
		if t.handedOver(snap.ID) {
			return nil // another replica follows it now, and writes it
		}
		rec := store.TaskRecord{ID: snap.ID, Owner: recordOwner(owner), Version: snap.Version, Ended: snap.Ended, Wire: snap.Wire, Backend: backend, Call: snap.Note}
		opts := store.PutOptions{Keep: taskKeep, Lease: lease, Holder: g.parked.tag}
		if snap.Ended {
			opts.Lease = 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeWait)
		defer cancel()
		_, err := ts.PutTask(ctx, rec, opts)
		if errors.Is(err, store.ErrTooLarge) {
			// The record that says why its result is not there.
			rec.Wire = failedWire(snap.Wire, fmt.Sprintf("the task's result (%d bytes) is larger than the gateway's store keeps (%d bytes)", len(snap.Wire), store.MaxTaskRecord))
			rec.Ended = true
			_, err = ts.PutTask(ctx, rec, opts)
		}
		if err != nil {
			g.log.Warn("gateway store: writing a task", "task", snap.ID, "err", err)
			return storeDown(err)
		}
		if snap.Ended {
			kept(snap.ID)
		}
		return nil
	}
}

// sharedAnswer returns what answers owner's requests of existing tasks
// when the replicas share them, nil when they stay in the process.
func (g *Gateway) sharedAnswer(owner string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	ts, lease := g.sharedTasks()
	if ts == nil {
		return nil
	}
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return g.answerShared(ctx, ts, lease, owner, method, params)
	}
}

// answerShared answers method (tasks/get, tasks/cancel or tasks/update)
// about a task of owner from the task store ts; lease is how long a
// running replica holds one.
func (g *Gateway) answerShared(ctx context.Context, ts TaskStore, lease time.Duration, owner, method string, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: tasks.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", method, err)}
	}
	if method == "tasks/update" {
		return g.updateShared(ctx, ts, owner, params, p.TaskID)
	}
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	if st := g.unsharedTask(owner, p.TaskID); st != nil {
		// Made before the config had a store: it is answered here.
		return jsonrpcErr(st.store.Answer(ctx, method, params))
	}
	rec, err := g.readShared(ctx, ts, owner, method, p.TaskID)
	if err == nil && g.orphaned(owner, rec) {
		rec, err = g.adopt(ctx, ts, lease, rec)
	}
	switch {
	case err != nil:
		return nil, err
	case method == "tasks/cancel":
		return g.cancelShared(ctx, ts, owner, rec)
	}
	return rec.Wire, nil
}

// adopt takes on rec, a task whose replica was lost before a read or a
// cancel of it came (orphaned), as that replica would have gone on with
// it: taken over, when another replica can follow its backend's task,
// else ended failed as lost, as its call was. A cancel then cancels it
// as any running task, the backend's task with it, and its call's line
// is written once, by the replica that took it over or ended it.
func (g *Gateway) adopt(ctx context.Context, ts TaskStore, lease time.Duration, rec store.TaskRecord) (store.TaskRecord, error) {
	if len(rec.Backend) > 0 {
		return g.takeOver(ctx, ts, lease, rec)
	}
	return g.failLost(ctx, ts, rec, lostWhy(lease))
}

// cancelShared cancels rec, a task of owner, for every reader; one that
// ended first keeps its end.
func (g *Gateway) cancelShared(ctx context.Context, ts TaskStore, owner string, rec store.TaskRecord) (json.RawMessage, error) {
	if !rec.Ended {
		rec.Wire = cancelledWire(rec.Wire)
		var err error
		if rec, _, err = g.endShared(ctx, ts, rec, false); err != nil {
			return nil, err
		}
	}
	// Stopped at once when it runs here, its own or taken over, and,
	// ended or not, no longer counted against its identity's tasks.
	if !g.cancelLocal(owner, rec.ID) {
		g.stopTakenOver(rec.ID)
	}
	g.dropDismissed(ts, owner)
	return json.RawMessage(`{}`), nil // the extension's bare ack: tasks/get tells the status
}

// orphaned reports whether rec, a task of owner, is working with no
// replica holding it: its lease lapsed, and it does not run here.
func (g *Gateway) orphaned(owner string, rec store.TaskRecord) bool {
	return !rec.Ended && !rec.Leased && !g.runsHere(owner, rec.ID)
}

// lostWhy is the statusMessage of a task ended failed as its replica
// stopped, holding it for lease.
func lostWhy(lease time.Duration) string {
	return fmt.Sprintf("the gateway replica running this task stopped before it ended (its %v lease was not renewed); call the tool again", lease)
}

// runsHere reports whether this replica runs task id of owner, as one
// of its own or one it took over.
func (g *Gateway) runsHere(owner, id string) bool {
	if st := g.ownerTasks(owner); st != nil && st.store.Holds(id) {
		return true
	}
	t := &g.ownerBook.takeovers
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.running[id]
	return ok
}

// unsharedTask returns the tasks of owner when they hold task id and do
// not tell the task store of it (made before the config had a store).
func (g *Gateway) unsharedTask(owner, id string) *sessionTasks {
	b := &g.ownerBook
	b.mu.Lock()
	st := b.byOwner[owner]
	b.mu.Unlock()
	if st == nil || !st.store.Untold(id) {
		return nil
	}
	return st.sessionTasks
}

// readShared reads task id of owner: another identity's is "no task".
func (g *Gateway) readShared(ctx context.Context, ts TaskStore, owner, method, id string) (store.TaskRecord, error) {
	rec, ok, err := ts.GetTask(ctx, id)
	if err == nil && !ok && g.rewriteLost(ts, owner, id) {
		// Running here, its record lost with the store (restarted empty):
		// written again now rather than at the next renewal.
		rec, ok, err = ts.GetTask(ctx, id)
	}
	switch {
	case err != nil:
		g.log.Warn("gateway store: reading a task", "task", id, "err", err)
		return rec, storeDown(err)
	case !ok || rec.Owner != recordOwner(owner):
		_, err := jsonrpcErr(nil, tasks.NoTask(method, id))
		return rec, err
	}
	return rec, nil
}

// endShared ends rec as it now reads (cancelled, or failed when its
// replica stopped: noLease) and returns the record as stored: its own
// end, or one that came first; won reports its own.
func (g *Gateway) endShared(ctx context.Context, ts TaskStore, rec store.TaskRecord, noLease bool) (_ store.TaskRecord, won bool, _ error) {
	rec.Version, rec.Ended = endedVersion, true
	won, err := ts.PutTask(ctx, rec, store.PutOptions{Keep: taskKeep, NoLease: noLease})
	if err != nil {
		g.log.Warn("gateway store: ending a task", "task", rec.ID, "err", err)
		return rec, false, storeDown(err)
	}
	owner := rec.Owner
	got, ok, err := ts.GetTask(ctx, rec.ID)
	if err != nil || !ok || got.Owner != owner {
		return rec, won, nil // ended; forgotten since, or unreadable now: what was written stands
	}
	return got, won, nil
}

// endedElsewhere reports whether another replica ended task id, whose
// call ends here, as lost, or took it over, while this replica stalled
// past its lease: that replica writes the call's line. The lease is
// renewed as it is looked at, in one step: a task held here again can
// no longer be ended as lost by another, so no two lines are written. A
// task cancelled by its client, whoever wrote it, is this replica's to
// write; so is one the store cannot tell of (unreachable, or forgotten).
func (g *Gateway) endedElsewhere(id string) bool {
	ts, lease := g.sharedTasks()
	if ts == nil {
		return false
	}
	gone, err := g.renewLeases(ts, lease, []string{id})
	if err != nil || len(gone) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	rec, ok, err := ts.GetTask(ctx, id)
	if err != nil || !ok {
		return false
	}
	var wire struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(rec.Wire, &wire)
	// Another replica's end is written past any of the running one's
	// versions: endedVersion (ended as lost, or cancelled), or
	// endedVersion-1 (ended by the replica that took it over).
	return !rec.Ended || rec.Version >= endedVersion-1 && wire.Status != tasks.Cancelled
}

// callNote is what a shared task's record keeps of its call
// (store.TaskRecord.Call): what its audit line names, written by the
// replica that ends the task failed if its own replica is lost.
type callNote struct {
	Tool    string `json:"tool"`
	Public  string `json:"public"`
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
}

// noteCall returns ctx, a task's as it starts, noting c in the task's
// record.
func noteCall(ctx context.Context, c Call) context.Context {
	return tasks.WithNote(ctx, mustJSON(callNote{Tool: c.Tool, Public: c.Public, Session: c.Session, Client: c.Client}))
}

// failLost ends rec, a task whose replica stopped before its call ended,
// failed with why, and writes the call's audit line, which its replica
// could not: the replica whose write ended it does, so that of all the
// replicas that read or cancel it lapsed at once one writes it. A record
// made before it kept its call (callNote) gets a line naming what it
// keeps.
func (g *Gateway) failLost(ctx context.Context, ts TaskStore, rec store.TaskRecord, why string) (store.TaskRecord, error) {
	rec.Wire = failedWire(rec.Wire, why)
	got, won, err := g.endShared(ctx, ts, rec, true)
	if won {
		g.resumeAudit(g.recordedCall(rec, Call{}), rec.Owner)(Outcome{Failed: true, Lost: true})
	}
	return got, err
}

// recordedCall is the call rec's record keeps (callNote), for the line
// another replica writes of it; known when it keeps none (made by an
// older release) or one unreadable: what else names the call.
func (g *Gateway) recordedCall(rec store.TaskRecord, known Call) Call {
	if len(rec.Call) == 0 {
		return known
	}
	var note callNote
	if err := json.Unmarshal(rec.Call, &note); err != nil {
		g.log.Warn("gateway store: a task's record of its call is unreadable; its audit line names only what else the record keeps (its identity, and its backend's tool when it has one)", "task", rec.ID, "err", err)
		return known
	}
	return Call{Tool: note.Tool, Public: note.Public, Session: note.Session, Client: note.Client}
}

// updateShared delivers a tasks/update to the task when this replica
// runs it; a task of owner running elsewhere (its replica could not be
// reached, or took it over) is refused, saying so.
func (g *Gateway) updateShared(ctx context.Context, ts TaskStore, owner string, params json.RawMessage, id string) (json.RawMessage, error) {
	if st := g.ownerTasks(owner); st != nil && st.store.Holds(id) {
		return jsonrpcErr(st.store.Answer(ctx, "tasks/update", params))
	}
	ctx, cancel := context.WithTimeout(ctx, storeWait)
	defer cancel()
	rec, err := g.readShared(ctx, ts, owner, "tasks/update", id)
	switch {
	case err != nil:
		return nil, err
	case rec.Ended:
		return json.RawMessage(`{}`), nil // an ended task takes no answers, as on its replica
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("tasks/update: task %q runs on another replica of the gateway, which alone takes its answers and could not be reached from this one; tasks/get tells how the task goes on", id)}
}

// cancelLocal cancels task id of owner if this replica holds it, and
// reports whether it did.
func (g *Gateway) cancelLocal(owner, id string) bool {
	st := g.ownerTasks(owner)
	if st == nil || !st.store.Holds(id) {
		return false
	}
	_, err := st.store.Answer(context.Background(), "tasks/cancel", taskRef(id))
	return err == nil
}

// renewLoop renews, every third of the lease, the leases of the tasks
// this replica runs, and stops those another replica ended, until the
// gateway closes; without a store, it forgets the ended tasks past
// taskKeep. newOwnerLocked starts it with the first identity's tasks.
func (g *Gateway) renewLoop() {
	for {
		_, lease := g.sharedTasks()
		select {
		case <-g.done:
			return
		case <-time.After(cmpPositive(lease, defaultLease) / 3):
		}
		g.renewAll()
	}
}

// renewAll renews the leases of the running tasks of every identity.
// Without a store it forgets the identities whose tasks all ended
// taskKeep ago or were dismissed, with their results: an identity that
// never comes back would keep them (with a store, their ends are there,
// and what this replica forgets of them goes there too: dropForgotten).
func (g *Gateway) renewAll() {
	b := &g.ownerBook
	ts, lease := g.sharedTasks()
	if ts == nil {
		b.mu.Lock()
		b.retireIdleLocked()
		b.mu.Unlock()
		return
	}
	running := map[string]string{} // task → owner
	var stores []*tasks.Store
	b.mu.Lock()
	for owner, st := range b.byOwner {
		for _, id := range st.store.Running() {
			running[id] = owner
		}
		stores = append(stores, st.store)
	}
	b.mu.Unlock()
	var forgotten []string
	for _, st := range stores {
		st.Retell() // the ends not written yet (the store was down)
		forgotten = append(forgotten, st.Forgotten()...)
	}
	g.dropForgotten(ts, forgotten)
	ids := append(g.takenOver(), slices.Collect(maps.Keys(running))...)
	gone, err := g.renewLeases(ts, lease, ids)
	if err != nil {
		g.log.Warn("gateway store: renewing the tasks' leases", "tasks", len(ids), "err", err)
		return
	}
	for _, id := range gone {
		if g.rewriteLost(ts, running[id], id) {
			continue
		}
		if g.stopTakenOver(id) || g.cancelLocal(running[id], id) { // else it ended here meanwhile
			g.log.Info("gateway store: a task ended by another replica stops here", "task", id)
		}
	}
}

// rewriteLost writes again the record of task id, running here for
// owner, when the store no longer holds it (Redis restarted empty): the
// task goes on, as its sessions' records do, rather than being cancelled
// for the store's loss. It reports whether id was left running: its
// record written, or the store unreadable (the next renewal asks again).
// An ended task is not written again: its result may be gone from here.
func (g *Gateway) rewriteLost(ts TaskStore, owner, id string) bool {
	st := g.ownerTasks(owner)
	if owner == "" || st == nil || !slices.Contains(st.store.Running(), id) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	_, ok, err := ts.GetTask(ctx, id)
	switch {
	case err != nil:
		return true
	case ok:
		// Ended or taken over by another replica, or written again here
		// meanwhile (a read of it): its lease, renewed if it is still
		// this replica's, says which.
		_, lease := g.sharedTasks()
		gone, err := g.renewLeases(ts, lease, []string{id})
		return err != nil || len(gone) == 0
	}
	g.log.Warn("gateway store: a running task's record was gone from the store (restarted empty?), so it is written again", "task", id)
	st.store.Tell(id)
	return true
}

// dropForgotten deletes the records of the ended tasks ids that their
// identity's tasks here forgot as dismissed past its maxSessionTasks:
// an identity that makes and dismisses tasks in a loop holds no more
// records in the store than it does here.
func (g *Gateway) dropForgotten(ts TaskStore, ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := ts.DropTasks(ctx, ids); err != nil {
		g.log.Warn("gateway store: dropping dismissed tasks' records", "tasks", len(ids), "err", err)
	}
}

// dropDismissed deletes at once the records of the tasks owner's tasks
// here forgot as its dismissals went past maxSessionTasks, rather than at
// the next renewal: an identity dismissing in a loop holds no more
// records in the store than it does here, whatever the lease.
func (g *Gateway) dropDismissed(ts TaskStore, owner string) {
	if st := g.ownerTasks(owner); st != nil {
		g.dropForgotten(ts, st.store.Forgotten())
	}
}

// renewLeases renews the leases of the tasks ids but those handed over
// (taskhandover.go), whose leases were given up, and returns the ids
// RenewTasks says ended.
func (g *Gateway) renewLeases(ts TaskStore, lease time.Duration, ids []string) ([]string, error) {
	t := &g.ownerBook.takeovers
	t.writes.RLock() // not over a hand-over's release
	defer t.writes.RUnlock()
	ids = slices.DeleteFunc(ids, t.handedOver)
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	return ts.RenewTasks(ctx, g.parked.tag, ids, lease, taskKeep)
}

// storeDown is the answer to a request the task store failed with err.
func storeDown(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway's task store cannot be reached: " + err.Error()}
}

// failedWire is the task wire, failed with msg.
func failedWire(wire json.RawMessage, msg string) json.RawMessage {
	return rewire(wire, map[string]any{"status": tasks.Failed, "statusMessage": msg,
		"error": tasks.WireError{Code: tasks.CodeInternalError, Message: msg}})
}

// cancelledWire is the task wire, cancelled.
func cancelledWire(wire json.RawMessage) json.RawMessage {
	return rewire(wire, map[string]any{"status": tasks.Cancelled})
}

// rewire returns the task wire with set's members set, its questions,
// result and error gone, and updated now.
func rewire(wire json.RawMessage, set map[string]any) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(wire, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	for _, k := range []string{"inputRequests", "result", "error", "statusMessage"} {
		delete(m, k)
	}
	set["lastUpdatedAt"] = time.Now().UTC().Format(time.RFC3339Nano)
	for k, v := range set {
		m[k] = mustJSON(v)
	}
	return mustJSON(m)
}

func cmpPositive(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}
