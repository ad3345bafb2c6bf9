package gateway

import (
	"context"
	"maps"
	"slices"

	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tasks handed over by a replica that stops in order (Close: a rolling
// deploy, a scale-down). A shared task whose backend's task another
// replica can follow (followableElsewhere: its record names it,
// tasktakeover.go), run here or taken over, is not cancelled: the
// replica stops following it without telling the backend
// (tool.ErrHandedOver), writes nothing more of it, and gives up its
// lease at once, so the next replica a client's tasks/get reaches takes
// it over then, not a lease later. A task no other process can follow
// (a stdio child's, a plain call's), or any task without a store, is
// cancelled as before; a client's tasks/cancel still cancels the
// backend's task.

// followableElsewhere reports whether another replica could follow
// backendTask, the backend's task of task id of st, were this one to
// stop: the replicas share their tasks, the task is one of theirs (told
// to the store, not a session's or one made before the config had a
// store), and the backend gave an id another process can follow (an
// HTTP backend's; a stdio child's task dies with it: "").
func (g *Gateway) followableElsewhere(st *tasks.Store, id, backendTask string) bool {
	ts, _ := g.sharedTasks()
	return ts != nil && backendTask != "" && !st.Untold(id)
}

// handOverTasks hands the tasks this replica follows that another can
// follow (recorded as followableElsewhere, or taken over) to the other
// replicas; Close calls it before it cancels anything. Without a store
// nothing is handed over: every task is cancelled.
func (g *Gateway) handOverTasks() {
	ts, _ := g.sharedTasks()
	if ts == nil {
		return
	}
	t := &g.ownerBook.takeovers
	t.writes.Lock() // no write of theirs in flight: none lands after the release
	stops := t.handOverLocked()
	t.writes.Unlock()
	if len(stops) == 0 {
		return
	}
	g.releaseLeases(ts, slices.Collect(maps.Keys(stops)))
	for id, stop := range stops {
		g.log.Info("gateway store: a task is handed over to the other replicas as this one stops; its backend's task goes on", "task", id)
		stop(tool.ErrHandedOver)
	}
}

// handOverLocked marks the tasks followed here that another replica can
// follow as handed over, and returns what ends their calls. t.writes is
// held.
func (t *takeovers) handOverLocked() map[string]context.CancelCauseFunc {
	t.mu.Lock()
	defer t.mu.Unlock()
	stops := maps.Clone(t.stops)
	if stops == nil {
		stops = map[string]context.CancelCauseFunc{}
	}
	maps.Copy(stops, t.running)
	if t.handed == nil {
		t.handed = map[string]bool{}
	}
	for id := range stops {
		t.handed[id] = true
	}
	return stops
}

// handedOver reports whether task id was handed over: its state is no
// longer this replica's to write.
func (t *takeovers) handedOver(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handed[id]
}

// releaseLeases gives up this replica's leases on the tasks ids: the
// next replica to read one takes it over. Failing that, the leases lapse
// and the tasks are taken over then.
func (g *Gateway) releaseLeases(ts TaskStore, ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := ts.ReleaseTasks(ctx, g.parked.tag, ids); err != nil {
		g.log.Warn("gateway store: giving up the leases of tasks handed over; they are taken over once the leases lapse", "tasks", len(ids), "err", err)
	}
}
