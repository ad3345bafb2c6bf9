package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// A task's record as two replicas see it: the running one writes newer
// versions, an older write or one over an ended record changes nothing,
// another owner cannot write it, and the lease says whether the running
// replica is still there.
func TestRedisTaskRecords(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	keep := time.Minute
	running := store.PutOptions{Keep: keep, Lease: time.Minute, Holder: "a"}
	put := func(s *store.Redis, rec store.TaskRecord, opts store.PutOptions) bool {
		t.Helper()
		return mustPut(t, s, rec, opts)
	}
	get := func(id string) (store.TaskRecord, bool) {
		t.Helper()
		rec, ok, err := b.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return rec, ok
	}
	if _, ok := get("t1"); ok {
		t.Fatal("a task never written is found")
	}
	if !put(a, store.TaskRecord{ID: "t1", Owner: "alice", Version: 2, Wire: []byte(`{"status":"input_required"}`)}, running) {
		t.Fatal("the first write was refused")
	}
	if put(a, store.TaskRecord{ID: "t1", Owner: "alice", Version: 1, Wire: []byte(`{"status":"working"}`)}, running) {
		t.Error("an older version overwrote a newer one")
	}
	if put(b, store.TaskRecord{ID: "t1", Owner: "mallory", Version: 9, Ended: true, Wire: []byte(`{}`)}, store.PutOptions{Keep: keep}) {
		t.Error("another owner overwrote alice's task")
	}
	if put(b, store.TaskRecord{ID: "t1", Owner: "alice", Version: 9, Ended: true, Wire: []byte(`{"status":"failed"}`)}, store.PutOptions{Keep: keep, NoLease: true}) {
		t.Error("a task whose lease holds was ended as stopped")
	}
	rec, ok := get("t1")
	want := store.TaskRecord{ID: "t1", Owner: "alice", Version: 2, Wire: []byte(`{"status":"input_required"}`), Leased: true}
	if diff := cmp.Diff(want, rec); !ok || diff != "" {
		t.Fatalf("the record read by another replica (-want +got):\n%s", diff)
	}

	// The running replica renews; a task another replica ended is
	// reported so that the running one stops it.
	put(a, store.TaskRecord{ID: "t2", Owner: "alice", Version: 1, Wire: []byte(`{}`)}, running)
	put(b, store.TaskRecord{ID: "t2", Owner: "alice", Version: 1 << 62, Ended: true, Wire: []byte(`{"status":"cancelled"}`)}, store.PutOptions{Keep: keep})
	gone, err := a.RenewTasks(ctx, "a", []string{"t1", "t2", "t3"}, 50*time.Millisecond, keep)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"t2", "t3"}, gone); diff != "" {
		t.Errorf("tasks to stop (-want +got):\n%s", diff)
	}
	if put(a, store.TaskRecord{ID: "t2", Owner: "alice", Version: 2, Ended: true, Wire: []byte(`{"status":"completed"}`)}, store.PutOptions{Keep: keep}) {
		t.Error("an ended record was overwritten")
	}

	// Once the lease is gone (50 ms, not renewed), another replica may
	// end the task, and only then.
	mcptest.Eventually(t, 5*time.Second, func() bool { r, _ := get("t1"); return !r.Leased }, "t1's lease to lapse")
	if !put(b, store.TaskRecord{ID: "t1", Owner: "alice", Version: 1 << 62, Ended: true, Wire: []byte(`{"status":"failed"}`)}, store.PutOptions{Keep: keep, NoLease: true}) {
		t.Fatal("a task whose lease lapsed could not be ended")
	}
	if rec, _ := get("t1"); !rec.Ended || string(rec.Wire) != `{"status":"failed"}` {
		t.Errorf("the ended record: %+v", rec)
	}
	if put(b, store.TaskRecord{ID: "t9", Owner: "alice", Version: 1, Ended: true, Wire: []byte(`{}`)}, store.PutOptions{Keep: keep, NoLease: true}) {
		t.Error("a task that was never written was ended as stopped")
	}

	big := store.TaskRecord{ID: "t4", Owner: "alice", Version: 1, Wire: []byte(`"` + strings.Repeat("x", store.MaxTaskRecord) + `"`)}
	if _, err := a.PutTask(ctx, big, running); err == nil || !strings.Contains(err.Error(), "larger than the store keeps") {
		t.Errorf("a record over the bound: %v", err)
	}
}

// A record lives Keep: an ended task is forgotten once it passed.
func TestRedisTaskRecordExpires(t *testing.T) {
	srv := mcptest.StartRedis(t)
	a := open(t, store.RedisOptions{URL: srv.URL()})
	if _, err := a.PutTask(t.Context(), store.TaskRecord{ID: "t", Owner: "o", Version: 1, Ended: true, Wire: []byte(`{}`)}, store.PutOptions{Keep: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 5*time.Second, func() bool {
		_, ok, err := a.GetTask(t.Context(), "t")
		return err == nil && !ok
	}, "the ended task to be forgotten")
}

// A running task's record outlives its lease's renewals, however long
// the lease against the time an ended one is kept: written or renewed
// with a lease of a minute, it is still there after Keep has passed.
func TestRedisRunningTaskOutlivesKeep(t *testing.T) {
	srv := mcptest.StartRedis(t)
	a := open(t, store.RedisOptions{URL: srv.URL()})
	keep := 100 * time.Millisecond
	mustPut(t, a, store.TaskRecord{ID: "put", Owner: "o", Version: 1, Wire: []byte(`{}`)}, store.PutOptions{Keep: keep, Lease: time.Minute, Holder: "a"})
	mustPut(t, a, store.TaskRecord{ID: "renewed", Owner: "o", Version: 1, Wire: []byte(`{}`)}, store.PutOptions{Keep: keep, Lease: keep, Holder: "a"})
	if gone, err := a.RenewTasks(t.Context(), "a", []string{"renewed"}, time.Minute, keep); err != nil || len(gone) != 0 {
		t.Fatalf("RenewTasks = %v, %v", gone, err)
	}
	time.Sleep(3 * keep)
	for _, id := range []string{"put", "renewed"} {
		if _, ok, err := a.GetTask(t.Context(), id); !ok || err != nil {
			t.Errorf("task %s, running under a lease of a minute, is forgotten after its Keep (%v)", id, err)
		}
	}
}

// A task whose work another replica can follow: its record keeps the
// backend's reference through later writes that do not carry it, and
// once the running replica's lease lapsed one replica, and only one,
// takes the task over (a write with NoLease and a lease of its own).
func TestRedisTaskTakenOver(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	ref := []byte(`{"tool":"t","task":"backend-1"}`)
	mustPut(t, a, store.TaskRecord{ID: "t", Owner: "alice", Version: 1, Wire: []byte(`{}`), Backend: ref}, store.PutOptions{Keep: time.Minute, Lease: 50 * time.Millisecond, Holder: "a"})
	mustPut(t, a, store.TaskRecord{ID: "t", Owner: "alice", Version: 2, Wire: []byte(`{"status":"working"}`)}, store.PutOptions{Keep: time.Minute, Lease: 50 * time.Millisecond, Holder: "a"})
	mcptest.Eventually(t, 5*time.Second, func() bool {
		rec, _, err := b.GetTask(ctx, "t")
		return err == nil && !rec.Leased
	}, "the lease to lapse")
	rec, _, err := b.GetTask(ctx, "t")
	if err != nil || string(rec.Backend) != string(ref) {
		t.Fatalf("the record's backend: %q, %v", rec.Backend, err)
	}
	claim := store.TaskRecord{ID: "t", Owner: "alice", Version: 3, Wire: rec.Wire}
	takeOver := store.PutOptions{Keep: time.Minute, Lease: time.Minute, NoLease: true, Holder: "b"}
	if !mustPut(t, b, claim, takeOver) {
		t.Fatal("a task whose lease lapsed could not be taken over")
	}
	claim.Version = 4
	if mustPut(t, a, claim, takeOver) {
		t.Error("a task taken over was taken over again while its new lease holds")
	}
	if rec, _, _ := a.GetTask(ctx, "t"); !rec.Leased || rec.Ended || string(rec.Backend) != string(ref) {
		t.Errorf("the task taken over: %+v", rec)
	}
}

// A replica that stops gives up the leases of the tasks it hands over:
// the records stay as written (their backend's reference too), and
// another replica takes one over at once, not when the lease would have
// lapsed; a task the replica does not release keeps its lease.
func TestRedisTaskReleased(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	releases := 0
	a := open(t, store.RedisOptions{URL: srv.URL(), Observe: func(op string, err error) {
		if op == "release_tasks" && err == nil {
			releases++
		}
	}})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	ref := []byte(`{"tool":"t","task":"backend-1"}`)
	running := store.PutOptions{Keep: time.Minute, Lease: time.Hour, Holder: "a"}
	mustPut(t, a, store.TaskRecord{ID: "t1", Owner: "alice", Version: 3, Wire: []byte(`{"status":"working"}`), Backend: ref}, running)
	mustPut(t, a, store.TaskRecord{ID: "t2", Owner: "alice", Version: 1, Wire: []byte(`{}`)}, running)
	if err := a.ReleaseTasks(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseTasks(ctx, "a", []string{"t1", "t9"}); err != nil {
		t.Fatal(err)
	}
	rec, _, err := b.GetTask(ctx, "t1")
	want := store.TaskRecord{ID: "t1", Owner: "alice", Version: 3, Wire: []byte(`{"status":"working"}`), Backend: ref}
	if diff := cmp.Diff(want, rec); err != nil || diff != "" {
		t.Fatalf("the released task, read by another replica (-want +got):\n%s %v", diff, err)
	}
	takeOver := store.PutOptions{Keep: time.Minute, Lease: time.Minute, NoLease: true, Holder: "b"}
	if !mustPut(t, b, store.TaskRecord{ID: "t1", Owner: "alice", Version: 4, Wire: rec.Wire}, takeOver) {
		t.Error("a released task could not be taken over")
	}
	if mustPut(t, b, store.TaskRecord{ID: "t2", Owner: "alice", Version: 2, Wire: []byte(`{}`)}, takeOver) {
		t.Error("a task not released was taken over while its lease holds")
	}
	if releases != 1 {
		t.Errorf("release_tasks observed %d times, want 1 (none for no ids)", releases)
	}
}

// mustPut writes rec to s and reports whether it was written; an error
// fails the test.
func mustPut(t *testing.T, s *store.Redis, rec store.TaskRecord, opts store.PutOptions) bool {
	t.Helper()
	ok, err := s.PutTask(t.Context(), rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// The records of ended tasks a replica forgot as dismissed are dropped
// at once, leases included; a task still running keeps its record
// whatever id a caller names.
func TestRedisEndedTasksDropped(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	keep := store.PutOptions{Keep: time.Minute, Lease: time.Hour, Holder: "a"}
	mustPut(t, a, store.TaskRecord{ID: "ended", Owner: "alice", Version: 2, Ended: true, Wire: []byte(`{"status":"completed"}`)}, store.PutOptions{Keep: time.Minute})
	mustPut(t, a, store.TaskRecord{ID: "running", Owner: "alice", Version: 1, Wire: []byte(`{"status":"working"}`)}, keep)
	if err := a.DropTasks(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.DropTasks(ctx, []string{"ended", "running", "unknown"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.GetTask(ctx, "ended"); ok || err != nil {
		t.Errorf("the ended task's record is still there (%v)", err)
	}
	if rec, ok, err := a.GetTask(ctx, "running"); !ok || err != nil || !rec.Leased {
		t.Errorf("the running task's record: %+v, %v, %v; want it kept, leased", rec, ok, err)
	}
}

// A lease names the replica that holds it. A replica that stalled past
// its lease while another took its task over finds, when it comes back,
// that the task is gone from it: its renewal, its writes (its end
// included) and its release leave the other's lease and record alone, so
// the task is followed once.
func TestRedisTaskLeaseHasItsHolder(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	mustPut(t, a, store.TaskRecord{ID: "t", Owner: "alice", Version: 1, Wire: []byte(`{"status":"working"}`)}, store.PutOptions{Keep: time.Minute, Lease: 50 * time.Millisecond, Holder: "a"})
	mcptest.Eventually(t, 5*time.Second, func() bool { rec, _, _ := b.GetTask(ctx, "t"); return !rec.Leased }, "a's lease to lapse")
	if !mustPut(t, b, store.TaskRecord{ID: "t", Owner: "alice", Version: 2, Wire: []byte(`{"status":"working","by":"b"}`)}, store.PutOptions{Keep: time.Minute, Lease: time.Minute, NoLease: true, Holder: "b"}) {
		t.Fatal("b could not take the task over")
	}
	gone, err := a.RenewTasks(ctx, "a", []string{"t"}, time.Minute, time.Minute)
	if err != nil || len(gone) != 1 {
		t.Errorf("a's renewal of a task b took over: gone %v, %v; want it gone from a", gone, err)
	}
	if mustPut(t, a, store.TaskRecord{ID: "t", Owner: "alice", Version: 3, Wire: []byte(`{"status":"working","by":"a"}`)}, store.PutOptions{Keep: time.Minute, Lease: time.Minute, Holder: "a"}) {
		t.Error("a wrote over the task b holds")
	}
	if mustPut(t, a, store.TaskRecord{ID: "t", Owner: "alice", Version: 4, Ended: true, Wire: []byte(`{"status":"completed","by":"a"}`)}, store.PutOptions{Keep: time.Minute, Holder: "a"}) {
		t.Error("a ended the task b holds")
	}
	if err := a.ReleaseTasks(ctx, "a", []string{"t"}); err != nil {
		t.Fatal(err)
	}
	rec, _, err := b.GetTask(ctx, "t")
	if err != nil || !rec.Leased || string(rec.Wire) != `{"status":"working","by":"b"}` {
		t.Errorf("the task b took over, after a came back: %+v, %v; want b's record, leased", rec, err)
	}
	if gone, err := b.RenewTasks(ctx, "b", []string{"t"}, time.Minute, time.Minute); err != nil || len(gone) != 0 {
		t.Errorf("b's renewal: gone %v, %v; want it kept", gone, err)
	}
	if _, err := a.PutTask(ctx, store.TaskRecord{ID: "u", Owner: "alice", Version: 1, Wire: []byte(`{}`)}, store.PutOptions{Keep: time.Minute, Lease: time.Minute}); err == nil {
		t.Error("a lease was taken without a holder")
	}
}
