package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpbridge/mcpbridge/internal/redact"
)

// Tasks in the store: one record per task, written by the replica running
// it and read by any. A record is the task's state as its client reads it
// (Wire, the task's JSON), the identity that owns it, a version that only
// grows, and whether it ended. Beside it, a lease the running replica
// renews: a record that has not ended and whose lease is gone belongs to
// a replica that stopped, and any replica may end it (PutTask with
// NoLease).

// MaxTaskRecord bounds a task's record (its result included): a bigger
// one is refused with ErrTooLarge, and the caller keeps a smaller one.
const MaxTaskRecord = 1 << 20

// ErrTooLarge is PutTask's refusal of a record over MaxTaskRecord.
var ErrTooLarge = errors.New("the task's record is larger than the store keeps")

// TaskRecord is a task as the store keeps it.
type TaskRecord struct {
	ID      string
	Owner   string // the identity that made it
	Version int64  // grows with each change the running replica writes
	Ended   bool   // completed, failed or cancelled: the record is final
	Wire    []byte // the task as its client reads it (JSON)
	// Backend is what another replica needs to follow the task's work
	// where it runs (the gateway's: the backend's tool and task id),
	// empty when only the running replica can; kept once written.
	Backend []byte
	// Call is what the audit line of the task's call needs should its
	// replica stop before the call ended (the gateway's: the tool, the
	// client and its session), written as the task is made and kept
	// once written; empty in a record made before it was kept.
	Call []byte
	// Leased reports, on a record read, that the running replica renewed
	// its lease in time; an ended record has none.
	Leased bool
}

// PutOptions say when PutTask writes.
type PutOptions struct {
	// Keep is how long the record lives without a renewal (the task's
	// ttl): an ended task is forgotten Keep after it ended.
	Keep time.Duration
	// Lease is how long the running replica holds a task that has not
	// ended before it must renew it (RenewTasks); 0 for an ended one.
	Lease time.Duration
	// NoLease writes only over a record whose lease is gone: another
	// replica ending a task whose replica stopped.
	NoLease bool
	// Holder names the replica writing (its tag): the lease it takes is
	// its own, and a write of a task whose lease another holds is refused
	// (it took the task over while this one stalled). "" writes whoever
	// holds the lease: a client's cancel, from any replica.
	Holder string
}

// putTask writes a record unless the stored one ended already, has a
// version at least as new, belongs to another owner, (ARGV[7] = 1) still
// has its lease, or (ARGV[9] set) has a lease another holder holds.
// KEYS: the record, its lease. ARGV: owner, version, ended (0/1), wire,
// keep (ms), lease (ms), noLease (0/1), backend ("" keeps the stored
// one), holder, call ("" keeps the stored one). It returns 1 when it wrote. A running task's record
// lives keep past its lease, which its replica renews every third of it:
// a lease longer than keep must not let the record lapse between renewals.
var putTask = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'version', 'ended')
if cur[1] then
  if cur[1] ~= ARGV[1] or cur[3] == '1' or tonumber(cur[2]) >= tonumber(ARGV[2]) then return 0 end
  local holder = redis.call('GET', KEYS[2])
  if ARGV[7] == '1' and holder then return 0 end
  if ARGV[9] ~= '' and holder and holder ~= ARGV[9] then return 0 end
elseif ARGV[7] == '1' then
  return 0
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'version', ARGV[2], 'ended', ARGV[3], 'wire', ARGV[4])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'backend', ARGV[8]) end
if ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'call', ARGV[10]) end
if ARGV[3] == '1' or tonumber(ARGV[6]) <= 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('DEL', KEYS[2])
else
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]) + tonumber(ARGV[6]))
  redis.call('SET', KEYS[2], ARGV[9], 'PX', ARGV[6])
end
return 1
`)

// PutTask writes rec when the stored record allows it (see putTask and
// opts), and reports whether it did. A record over MaxTaskRecord is
// refused with ErrTooLarge.
func (r *Redis) PutTask(ctx context.Context, rec TaskRecord, opts PutOptions) (bool, error) {
	if len(rec.Wire) > MaxTaskRecord {
		return false, fmt.Errorf("task %s: %w (%d bytes, at most %d)", rec.ID, ErrTooLarge, len(rec.Wire), MaxTaskRecord)
	}
	if opts.Lease > 0 && opts.Holder == "" {
		return false, fmt.Errorf("task %s: a lease is taken by a holder, and PutOptions names none", rec.ID)
	}
	n, err := putTask.Run(ctx, r.client, r.taskKeys(rec.ID), rec.Owner, rec.Version, flag(rec.Ended), rec.Wire,
		max(opts.Keep.Milliseconds(), 1), opts.Lease.Milliseconds(), flag(opts.NoLease), rec.Backend, opts.Holder, rec.Call).Int()
	r.observe("put_task", err)
	if err != nil {
		return false, fmt.Errorf("writing task %s to the store at redis %s: %w", rec.ID, r.addr, redact.Error(err))
	}
	return n == 1, nil
}

// GetTask reads task id's record; ok is false when there is none (never
// made, or forgotten).
func (r *Redis) GetTask(ctx context.Context, id string) (rec TaskRecord, ok bool, err error) {
	keys := r.taskKeys(id)
	var fields *redis.SliceCmd
	var leased *redis.IntCmd
	_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		fields = p.HMGet(ctx, keys[0], "owner", "version", "ended", "wire", "backend", "call")
		leased = p.Exists(ctx, keys[1])
		return nil
	})
	r.observe("get_task", err)
	if err != nil {
		return TaskRecord{}, false, fmt.Errorf("reading task %s from the store at redis %s: %w", id, r.addr, redact.Error(err))
	}
	v := fields.Val()
	owner, _ := v[0].(string)
	if owner == "" {
		return TaskRecord{}, false, nil
	}
	version, _ := v[1].(string)
	ended, _ := v[2].(string)
	wire, _ := v[3].(string)
	rec = TaskRecord{ID: id, Owner: owner, Ended: ended == "1", Wire: []byte(wire), Leased: leased.Val() == 1}
	if backend, _ := v[4].(string); backend != "" {
		rec.Backend = []byte(backend)
	}
	if call, _ := v[5].(string); call != "" {
		rec.Call = []byte(call)
	}
	rec.Version, _ = strconv.ParseInt(version, 10, 64)
	return rec, true, nil
}

// renewTasks renews the lease of each task in KEYS (record, lease,
// record, lease, …) that has not ended and whose lease is ARGV[3]'s, or
// lapsed, for ARGV[1] ms, its record kept ARGV[2] ms past it; it returns the
// positions (from 1) of those that ended, were forgotten or are another
// holder's (taken over while this one stalled), whose running replica
// must stop them.
var renewTasks = redis.NewScript(`
local gone = {}
for i = 1, #KEYS, 2 do
  local ended = redis.call('HGET', KEYS[i], 'ended')
  local holder = redis.call('GET', KEYS[i+1])
  if ended == '0' and (not holder or holder == ARGV[3]) then
    redis.call('SET', KEYS[i+1], ARGV[3], 'PX', ARGV[1])
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[1]) + tonumber(ARGV[2]))
  else
    table.insert(gone, (i + 1) / 2)
  end
end
return gone
`)

// RenewTasks renews the leases holder holds on the tasks ids it runs,
// for lease, and keeps their records keep more; it returns the ids that
// ended meanwhile (another replica cancelled them, or ended them as
// stopped), were forgotten, or another replica took over: the caller
// stops running them.
func (r *Redis) RenewTasks(ctx context.Context, holder string, ids []string, lease, keep time.Duration) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, r.taskKeys(id)...)
	}
	gone, err := renewTasks.Run(ctx, r.client, keys, lease.Milliseconds(), keep.Milliseconds(), holder).Int64Slice()
	r.observe("renew_tasks", err)
	if err != nil {
		return nil, fmt.Errorf("renewing %d tasks' leases in the store at redis %s: %w", len(ids), r.addr, redact.Error(err))
	}
	out := make([]string, 0, len(gone))
	for _, i := range gone {
		if i >= 1 && int(i) <= len(ids) {
			out = append(out, ids[i-1])
		}
	}
	return out, nil
}

// dropEnded deletes the record and lease of each task in KEYS (record,
// lease, …) that has ended.
var dropEnded = redis.NewScript(`
for i = 1, #KEYS, 2 do
  if redis.call('HGET', KEYS[i], 'ended') == '1' then
    redis.call('DEL', KEYS[i], KEYS[i+1])
  end
end
return 0
`)

// DropTasks deletes at once the records of the tasks ids that ended (a
// replica that forgot them as dismissed): a record of a task still
// running stays.
func (r *Redis) DropTasks(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	keys := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, r.taskKeys(id)...)
	}
	err := dropEnded.Run(ctx, r.client, keys).Err()
	r.observe("drop_tasks", err)
	if err != nil {
		return fmt.Errorf("dropping %d dismissed tasks' records in the store at redis %s: %w", len(ids), r.addr, redact.Error(err))
	}
	return nil
}

// releaseLeases deletes each lease in KEYS that ARGV[1] holds.
var releaseLeases = redis.NewScript(`
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 0
`)

// ReleaseTasks gives up at once the leases holder holds on the tasks ids
// it runs, their records kept as they are: a replica that stops hands the
// tasks it can hand over to the others, the next of which to read one
// takes it over (a record that has not ended, its lease gone) instead of
// waiting for the lease to lapse. A lease another replica holds stays.
func (r *Redis) ReleaseTasks(ctx context.Context, holder string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	leases := make([]string, 0, len(ids))
	for _, id := range ids {
		leases = append(leases, r.taskKeys(id)[1])
	}
	err := releaseLeases.Run(ctx, r.client, leases, holder).Err()
	r.observe("release_tasks", err)
	if err != nil {
		return fmt.Errorf("giving up %d tasks' leases in the store at redis %s: %w", len(ids), r.addr, redact.Error(err))
	}
	return nil
}

func (r *Redis) taskKeys(id string) []string {
	k := r.prefix + "task:" + id
	return []string{k, k + ":lease"}
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
