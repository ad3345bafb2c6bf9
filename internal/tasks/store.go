package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// The receiving side: a Store runs the task-augmented requests of the
// peer (a server's elicitation/create or sampling/createMessage with a
// "task" field) as tasks, and answers the peer's tasks/get, tasks/result,
// tasks/cancel and tasks/list about them.

// CodeInvalidParams is JSON-RPC's code for a request naming no task of
// the store, or a store that is full.
const CodeInvalidParams = -32602

// Error is a JSON-RPC error to answer a request with.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// storePoll is the poll interval the store asks its peer for.
const storePoll = 500 * time.Millisecond

// Store holds the tasks run for the peer. It holds at most max tasks; one
// leaves when its result has been fetched, it was cancelled, or (with
// StoreOptions.Keep) it ended longer ago than Keep. Safe for concurrent use.
type Store struct {
	max  int
	keep time.Duration
	now  func() time.Time
	ext  bool // the 2026-07-28 extension's shapes (StoreOptions.Extension)

	changed  func(Snapshot) error // StoreOptions.Changed; nil: none
	tells    func() bool          // StoreOptions.Tells; nil: always
	idPrefix string               // StoreOptions.IDPrefix

	mu      sync.Mutex
	tasks   map[string]*run
	closed  bool
	version int64          // counts the changes told to changed; guarded by mu
	wg      sync.WaitGroup // the tasks' goroutines
	// forgotten lists the tasks told to Changed that were forgotten as
	// dismissed past Max before Keep passed (Forgotten); guarded by mu.
	forgotten []string
}

// maxForgotten bounds the ids Forgotten holds between two calls: past it
// a record elsewhere waits for its own end of keep.
const maxForgotten = 1024

type run struct {
	task    Task
	created time.Time
	updated time.Time     // when its state last changed (touch); guarded by Store.mu
	keep    time.Duration // how long it is kept once ended (keepFor): its ttl
	ended   time.Time     // when the body returned; zero while it runs
	result  json.RawMessage
	err     error
	done    chan struct{}
	cancel  context.CancelCauseFunc
	asks    map[string]*pendingAsk // the extension's questions waiting; guarded by Store.mu
	asked   int                    // questions asked so far, for their keys; guarded by Store.mu
	told    bool                   // its changes are told to Changed
	note    []byte                 // WithNote's, told with each change
	kept    bool                   // its end is kept elsewhere (Kept); guarded by Store.mu
	// dismissed is when the extension's peer cancelled the task (zero:
	// never): it no longer counts against Max, and stays readable (its
	// status cancelled, or the end it had) until Keep passes or more
	// than Max dismissed tasks are kept (cancelExt). Guarded by Store.mu.
	dismissed time.Time
}

// NewStore returns an empty store of at most max tasks, kept until
// collected.
func NewStore(max int) *Store { return NewStoreWith(StoreOptions{Max: max}) }

// StoreOptions configure a Store.
type StoreOptions struct {
	// Max bounds the tasks held, running or ended and not yet collected.
	Max int
	// Keep is how long an ended task waits to be collected before it is
	// forgotten (the task's ttl, as the peer reads it), and the most a
	// peer's requested ttl gets (StartTTL); 0 keeps it until collected,
	// cancelled or the store closes.
	Keep time.Duration
	// Now tells the time; nil is time.Now (tests inject a clock).
	Now func() time.Time
	// Extension answers in the shapes of the 2026-07-28 tasks extension
	// (io.modelcontextprotocol/tasks): a created task is a result of
	// "resultType":"task", tasks/get carries an ended task's result or
	// error and a waiting task's inputRequests (Ask), and tasks/update
	// brings the answers.
	Extension bool
	// Changed, when set, is told each change of a task's state, in a
	// Snapshot, outside the store's lock: a record of the tasks kept
	// elsewhere (the gateway's replicas share them). Two changes of one
	// task may be told in either order: the one with the greater Version
	// is the newer. An error telling a task's creation refuses the task
	// (Start returns it); a later one is the Changed's to report.
	Changed func(Snapshot) error
	// Tells, when set, says as a task starts whether Changed is told of
	// it (the gateway's config may gain or lose the store tasks are kept
	// in); nil tells of every task.
	Tells func() bool
	// IDPrefix starts every task id the store makes (the gateway's
	// replica tag, so that a request naming a task reaches the replica
	// running it); the random part follows.
	IDPrefix string
}

// Snapshot is a task's state after a change (StoreOptions.Changed).
type Snapshot struct {
	ID      string
	Version int64           // greater for each later change of the store
	Ended   bool            // completed, failed or cancelled
	Wire    json.RawMessage // the task as tasks/get answers it
	Note    []byte          // what the task was started with (WithNote); nil without
}

type noteKey struct{}

// WithNote returns ctx, for Start, with note: each Snapshot of the task
// started with it carries note, for Changed to keep with the task.
func WithNote(ctx context.Context, note []byte) context.Context {
	return context.WithValue(ctx, noteKey{}, note)
}

// NewStoreWith returns an empty store configured by opts.
func NewStoreWith(opts StoreOptions) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{max: opts.Max, keep: opts.Keep, now: now, ext: opts.Extension, changed: opts.Changed, tells: opts.Tells, idPrefix: opts.IDPrefix, tasks: map[string]*run{}}
}

type idKey struct{}

// IDFrom returns the id of the task whose body runs with ctx (Start), ""
// outside one.
func IDFrom(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// SetStatus sets the status of the running task id (a body that waits
// for its peer's input says so with InputRequired, and Working after);
// a task that ended or is unknown is left alone.
func (s *Store) SetStatus(id, status, message string) {
	s.mu.Lock()
	var snap *pendingSnapshot
	if r, ok := s.tasks[id]; ok && r.ended.IsZero() && r.task.Status != Cancelled {
		if r.task.Status != status || r.task.StatusMessage != message {
			s.touch(r)
		}
		r.task.Status, r.task.StatusMessage = status, message
		snap = s.snapLocked(r, r.task)
	}
	s.mu.Unlock()
	s.tell(snap)
}

// pendingSnapshot is a Snapshot taken under the lock, its wire not yet
// encoded.
type pendingSnapshot struct {
	Snapshot
	wire map[string]any
}

// snapLocked is t, r's state after a change, for Changed; nil without
// one. s.mu must be held.
func (s *Store) snapLocked(r *run, t Task) *pendingSnapshot {
	if !r.told {
		return nil
	}
	s.version++
	ended := !r.ended.IsZero() || t.Status == Cancelled
	return &pendingSnapshot{Snapshot: Snapshot{ID: t.TaskID, Version: s.version, Ended: ended, Note: r.note}, wire: s.wire(r, t)}
}

// tell tells Changed of snap (nil: nothing to tell), outside the lock.
func (s *Store) tell(snap *pendingSnapshot) error {
	if snap == nil {
		return nil
	}
	wire, err := json.Marshal(snap.wire)
	if err != nil {
		return fmt.Errorf("encoding task %s: %w", snap.ID, err)
	}
	snap.Wire = wire
	return s.changed(snap.Snapshot)
}

// Holds reports whether s holds task id (running, or ended and kept).
func (s *Store) Holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tasks[id]
	return ok
}

// Untold reports whether s holds task id and Changed is not told of it
// (Tells said no as it started).
func (s *Store) Untold(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[id]
	return ok && !r.told
}

// Kept tells s that the end of task id is kept elsewhere (Changed wrote
// it): its result is dropped here, and Retell no longer tells it. The
// task still counts against Max, as an ended task not collected does,
// until it is cancelled or Keep passes: kept elsewhere or not, a peer
// holds at most Max tasks of the store's.
func (s *Store) Kept(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.tasks[id]; ok && !r.ended.IsZero() {
		r.result, r.kept = nil, true
	}
}

// Retell tells Changed again of every task that ended and whose end is
// not Kept elsewhere (its telling failed).
func (s *Store) Retell() {
	s.mu.Lock()
	var snaps []*pendingSnapshot
	for _, r := range s.tasks {
		if r.ended.IsZero() || r.kept {
			continue
		}
		if snap := s.snapLocked(r, r.task); snap != nil {
			snaps = append(snaps, snap)
		}
	}
	s.mu.Unlock()
	for _, snap := range snaps {
		s.tell(snap)
	}
}

// Tell tells Changed again of task id's state as it is (its consumer
// has more to record with it), when it is told of at all.
func (s *Store) Tell(id string) {
	s.mu.Lock()
	var snap *pendingSnapshot
	if r, ok := s.tasks[id]; ok {
		snap = s.snapLocked(r, r.task)
	}
	s.mu.Unlock()
	s.tell(snap)
}

// Running returns the ids of the tasks whose body has not returned.
func (s *Store) Running() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, r := range s.tasks {
		if r.ended.IsZero() && r.task.Status != Cancelled {
			ids = append(ids, id)
		}
	}
	return ids
}

// NoTask is the error that answers method for a task id the store does
// not hold: any other holder of tasks answers an unknown id the same way.
func NoTask(method, id string) *Error {
	return &Error{CodeInvalidParams, fmt.Sprintf("%s: no task %q", method, id)}
}

// sweep forgets the ended tasks kept longer than keep, and the dismissed
// tasks past the max most recent. s.mu must be held.
func (s *Store) sweep() {
	s.sweepDismissed()
	now := s.now()
	for id, r := range s.tasks {
		if r.keep > 0 && !r.ended.IsZero() && r.ended.Before(now.Add(-r.keep)) {
			delete(s.tasks, id)
		}
	}
}

// sweepDismissed forgets the dismissed tasks past the max most recently
// dismissed: a peer that makes and cancels tasks in a loop holds no more
// memory than one that keeps its tasks. s.mu must be held.
func (s *Store) sweepDismissed() {
	var oldest *run
	n := 0
	for _, r := range s.tasks {
		if r.dismissed.IsZero() {
			continue
		}
		n++
		if oldest == nil || r.dismissed.Before(oldest.dismissed) {
			oldest = r
		}
	}
	if n > s.max {
		delete(s.tasks, oldest.task.TaskID) // one dismissal at a time: one over
		if oldest.told && len(s.forgotten) < maxForgotten {
			s.forgotten = append(s.forgotten, oldest.task.TaskID)
		}
	}
}

// Forgotten forgets what is due and returns, once, the tasks told to
// Changed that s forgot as dismissed past Max before Keep passed: the record Changed keeps of each
// may go too, so that a peer that makes and dismisses tasks in a loop
// holds no more records elsewhere than here.
func (s *Store) Forgotten() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	ids := s.forgotten
	s.forgotten = nil
	return ids
}

// Held reports how many tasks s holds: running, or ended and neither
// collected, dismissed nor forgotten yet (Keep).
func (s *Store) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	return s.heldLocked()
}

// heldLocked is Held under s.mu.
func (s *Store) heldLocked() int {
	n := 0
	for _, r := range s.tasks {
		if r.dismissed.IsZero() {
			n++
		}
	}
	return n
}

// Handles reports whether method is a request Answer answers.
func Handles(method string) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/list":
		return true
	}
	return false
}

// IsAugmented reports whether params, valid JSON, ask for the request to
// run as a task: a member named "task" exactly (the SDK's decoder matches
// names by case, after unescaping; of repeated members the last counts)
// whose value is not null. encoding/json, which matches any case, took
// {"Task":{}} for a task the SDK's own reading does not see.
func IsAugmented(params json.RawMessage) bool {
	task := member(params, "task")
	return task != nil && string(task) != "null"
}

// RequestedTTL is the ttl that params, those of a request IsAugmented,
// ask their task to be kept for (the "task" member's "ttl", in
// milliseconds, its members read as IsAugmented reads them); 0 when they
// name none.
func RequestedTTL(params json.RawMessage) time.Duration {
	var ms float64
	if json.Unmarshal(member(member(params, "task"), "ttl"), &ms) != nil || ms <= 0 {
		return 0
	}
	if ms >= float64(math.MaxInt64/int64(time.Millisecond)) {
		return math.MaxInt64 // longer than any store keeps a task
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// member is the value of obj's member named name exactly (the last of
// repeated ones, as the SDK's decoder takes it), nil when it has none or
// obj, valid JSON, is no object.
func member(obj []byte, name string) json.RawMessage {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 || obj[0] != '{' {
		return nil
	}
	var val json.RawMessage
	for key, v := range projection.Members(obj) {
		if projection.KeyIs(key, name) {
			val = v
		}
	}
	return val
}

// Start runs fn as a new task on a goroutine of its own, with a context
// that ends when the task is cancelled or ctx ends, and returns the
// CreateTaskResult to answer with. The task is kept Keep once ended.
func (s *Store) Start(ctx context.Context, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	return s.StartTTL(ctx, 0, fn)
}

// StartTTL is Start of a task whose peer asked for ttl (RequestedTTL; 0:
// none): it is kept ttl once ended, at most Keep, and says so.
func (s *Store) StartTTL(ctx context.Context, ttl time.Duration, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	id, err := newID(s.idPrefix)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancelCause(context.WithValue(ctx, idKey{}, id))
	now := s.now()
	r := &run{task: Task{TaskID: id, Status: Working, PollInterval: float64(storePoll.Milliseconds())}, created: now, updated: now, keep: s.keepFor(ttl),
		done: make(chan struct{}), cancel: cancel, told: s.changed != nil && (s.tells == nil || s.tells())}
	r.note, _ = ctx.Value(noteKey{}).([]byte)
	s.mu.Lock()
	s.sweep()
	if s.closed || s.heldLocked() >= s.max {
		closed := s.closed
		s.mu.Unlock()
		cancel(nil)
		if closed {
			return nil, errors.New("the connection is closing")
		}
		return nil, &Error{CodeInvalidParams, fmt.Sprintf("too many tasks in flight (at most %d)", s.max)}
	}
	s.tasks[id] = r
	s.wg.Add(1)
	created := s.wire(r, r.task) // before the body can change it
	snap := s.snapLocked(r, r.task)
	s.mu.Unlock()
	if err := s.tell(snap); err != nil {
		s.mu.Lock()
		delete(s.tasks, id)
		s.mu.Unlock()
		s.wg.Done()
		cancel(nil)
		return nil, err
	}
	go func() {
		defer s.wg.Done()
		res, err := fn(rctx)
		s.mu.Lock()
		r.result, r.err, r.ended = res, err, s.now()
		switch {
		case r.task.Status == Cancelled: // updated as it was cancelled
		case err != nil:
			r.task.Status, r.task.StatusMessage, r.updated = Failed, err.Error(), r.ended
		default:
			r.task.Status, r.updated = Completed, r.ended
		}
		snap := s.snapLocked(r, r.task)
		s.mu.Unlock()
		s.tell(snap) // an error is Changed's to report
		close(r.done)
		cancel(nil)
	}()
	if s.ext {
		created["resultType"] = "task"
		return json.Marshal(created)
	}
	return json.Marshal(map[string]any{"task": created})
}

// Answer answers a tasks/* request of the peer (Handles).
func (s *Store) Answer(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "tasks/list":
		return s.list()
	case "tasks/update":
		return s.update(params)
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{CodeInvalidParams, fmt.Sprintf("%s: %v", method, err)}
	}
	s.mu.Lock()
	s.sweep()
	r, ok := s.tasks[p.TaskID]
	var got map[string]any
	if ok {
		got = s.wire(r, r.task)
	}
	s.mu.Unlock()
	if !ok {
		return nil, NoTask(method, p.TaskID)
	}
	switch method {
	case "tasks/get":
		return json.Marshal(got)
	case "tasks/cancel":
		if s.ext {
			return s.cancelExt(r)
		}
		return s.cancelTask(r)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	delete(s.tasks, p.TaskID)
	s.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

// cancelTask answers 2025-11-25's tasks/cancel of r: a task in a
// terminal status is refused (-32602, as the spec asks: it keeps its
// result); a running one ends cancelled, its body's context cancelled,
// and is dismissed as cancelExt does: it frees its place among Max and
// reads as cancelled until Keep passes.
func (s *Store) cancelTask(r *run) (json.RawMessage, error) {
	s.mu.Lock()
	if status := r.task.Status; !r.ended.IsZero() || status == Cancelled {
		s.mu.Unlock()
		return nil, &Error{CodeInvalidParams, fmt.Sprintf("tasks/cancel: task %s is already %s", r.task.TaskID, status)}
	}
	r.task.Status, r.task.StatusMessage = Cancelled, ""
	s.touch(r)
	if r.dismissed.IsZero() {
		r.dismissed = r.updated
	}
	got := s.wire(r, r.task)
	snap := s.snapLocked(r, r.task)
	s.mu.Unlock()
	r.cancel(nil)
	s.tell(snap)
	return json.Marshal(got)
}

func (s *Store) list() (json.RawMessage, error) {
	s.mu.Lock()
	s.sweep()
	out := make([]map[string]any, 0, len(s.tasks))
	for _, r := range s.tasks {
		out = append(out, s.wire(r, r.task))
	}
	s.mu.Unlock()
	return json.Marshal(map[string]any{"tasks": out})
}

// Close cancels every task and waits for their goroutines to return;
// Start refuses new ones from then on.
func (s *Store) Close() { s.CloseWith(nil) }

// CloseWith is Close, each task's context ended with cause (nil:
// context.Canceled), which tells its body why.
func (s *Store) CloseWith(cause error) {
	s.mu.Lock()
	s.closed = true
	for id, r := range s.tasks {
		r.cancel(cause)
		delete(s.tasks, id)
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// wire is t, the state of r, as the peer reads it (SEP-1686's Task; with
// the extension, its names and what it carries inline). s.mu must be held
// for the extension's.
func (s *Store) wire(r *run, t Task) map[string]any {
	if s.ext {
		return s.extWire(r, t)
	}
	var ttl any // null: kept until collected
	if r.keep > 0 {
		ttl = r.keep.Milliseconds()
	}
	m := map[string]any{
		"taskId":        t.TaskID,
		"status":        t.Status,
		"ttl":           ttl,
		"createdAt":     r.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": r.updated.UTC().Format(time.RFC3339Nano),
		"pollInterval":  t.PollInterval,
	}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	return m
}

// touch records that r's state changed now (its lastUpdatedAt). s.mu
// must be held.
func (s *Store) touch(r *run) { r.updated = s.now() }

// keepFor is how long a task whose peer asked for ttl (0: none) is kept
// once ended: ttl, at most Keep (none: Keep). The spec lets the receiver
// lower a requested ttl, and the task says what it got.
func (s *Store) keepFor(ttl time.Duration) time.Duration {
	if ttl <= 0 || (s.keep > 0 && ttl > s.keep) {
		return s.keep
	}
	return ttl
}

// newID returns an unguessable task id starting with prefix: a peer can
// only name tasks it was told of.
func newID(prefix string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making a task id: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}
