package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpbridge/mcpbridge/internal/redact"
)

// Which replica owns what (a client session, the calls a replica parked)
// and the secret the replicas sign the requests they forward to each
// other with. A record names the address its owner is reached at and
// lapses unless the owner renews it: a replica that stopped leaves no
// owner behind for long. The caller names what is owned ("session:ID").

// secretBytes is the length of the replicas' secret.
const secretBytes = 32

// ErrOwnersSettling is Owner's error for a name without a record in a
// store that began holding records less than a record's ttl ago (it
// restarted empty): the name's owner may not have written its record
// again yet, so it is not known to be gone.
var ErrOwnersSettling = errors.New("the store restarted empty moments ago and the replicas are recording what they own again")

// markEpoch marks, when the store holds no epoch (it is new, or restarted
// empty), that its records began now: the epoch (KEYS[1]) stays, and the
// settling mark (KEYS[2]) lapses after ARGV[1] ms, a record's ttl, by
// which every owner has written its records again.
var markEpoch = redis.NewScript(`
if redis.call('SET', KEYS[1], '1', 'NX') then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
end
return 0
`)

// PutOwners records owner (a replica's address) as the owner of each of
// names for ttl; a record lost meanwhile (the store restarted) is
// written again.
func (r *Redis) PutOwners(ctx context.Context, names []string, owner string, ttl time.Duration) error {
	if len(names) == 0 {
		return nil
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		markEpoch.Eval(ctx, p, r.epochKeys(), max(ttl.Milliseconds(), 1))
		for _, name := range names {
			p.Set(ctx, r.ownerKey(name), owner, ttl)
		}
		return nil
	})
	r.observe("put_owner", err)
	if err != nil {
		return fmt.Errorf("recording the owner of %d name(s) in the store at redis %s: %w", len(names), r.addr, redact.Error(err))
	}
	return nil
}

// Owner returns the address of the replica that owns name; ok is false
// when no replica does (never recorded, ended, or its owner stopped
// renewing it). While the store's records may be incomplete (it is new,
// or restarted empty, less than a record's ttl ago) a name without one is
// ErrOwnersSettling, not unowned, unless it was dropped meanwhile.
func (r *Redis) Owner(ctx context.Context, name string) (owner string, ok bool, err error) {
	owner, err = r.client.Get(ctx, r.ownerKey(name)).Result()
	if errors.Is(err, redis.Nil) {
		err = r.settled(ctx)
	}
	r.observe("get_owner", err)
	switch {
	case errors.Is(err, ErrOwnersSettling):
		return "", false, fmt.Errorf("finding the owner of %s in the store at redis %s: %w", name, r.addr, err)
	case err != nil:
		return "", false, fmt.Errorf("reading the owner of %s from the store at redis %s: %w", name, r.addr, redact.Error(err))
	case owner == "":
		return "", false, nil
	}
	return owner, true, nil
}

// settled returns nil when the store's records are whole: it has an
// epoch whose settling mark lapsed.
func (r *Redis) settled(ctx context.Context) error {
	keys := r.epochKeys()
	n, err := r.client.Exists(ctx, keys[0]).Result()
	if err == nil && n == 1 {
		n, err = r.client.Exists(ctx, keys[1]).Result()
		n = 1 - n
	}
	switch {
	case err != nil:
		return err
	case n == 0:
		return ErrOwnersSettling
	}
	return nil
}

// epochKeys are the keys of the owner records' epoch and of its settling
// mark.
func (r *Redis) epochKeys() []string {
	return []string{r.prefix + "owners:epoch", r.prefix + "owners:settling"}
}

// dropOwners forgets the owners of KEYS[2..] while ARGV[1] is "" or each
// still names ARGV[1]. While the store settles (its settling mark,
// KEYS[1], has not lapsed) a forgotten owner is written as none until it
// lapses: the name is known to be unowned, where a missing record then
// only says its owner may not have written it again yet.
var dropOwners = redis.NewScript(`
local left = redis.call('PTTL', KEYS[1])
local n = 0
for i = 2, #KEYS do
  if ARGV[1] == '' or redis.call('GET', KEYS[i]) == ARGV[1] then
    if left > 0 then
      redis.call('SET', KEYS[i], '', 'PX', left)
    else
      redis.call('DEL', KEYS[i])
    end
    n = n + 1
  end
end
return n
`)

// DropOwners forgets the owners of names (they ended).
func (r *Redis) DropOwners(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	err := r.drop(ctx, names, "")
	if err != nil {
		return fmt.Errorf("forgetting the owners of %d name(s) in the store at redis %s: %w", len(names), r.addr, redact.Error(err))
	}
	return nil
}

// DropOwnerIf forgets the owner of name only while it is still owner: a
// replica that could not reach the owner it read drops that record, not
// one written since (the owner renewed it elsewhere, another took over).
func (r *Redis) DropOwnerIf(ctx context.Context, name, owner string) error {
	if err := r.drop(ctx, []string{name}, owner); err != nil {
		return fmt.Errorf("forgetting the owner of %s in the store at redis %s: %w", name, r.addr, redact.Error(err))
	}
	return nil
}

// drop runs dropOwners on names, for owner ("" for any).
func (r *Redis) drop(ctx context.Context, names []string, owner string) error {
	keys := make([]string, 0, len(names)+1)
	keys = append(keys, r.epochKeys()[1])
	for _, name := range names {
		keys = append(keys, r.ownerKey(name))
	}
	err := dropOwners.Run(ctx, r.client, keys, owner).Err()
	r.observe("drop_owner", err)
	return err
}

// ReplicaSecret returns the secret every replica using this store
// shares: made at random by the first replica that asks, kept in the
// store. Whoever can read the store can read it; whoever can write the
// store can already misdirect every replica.
func (r *Redis) ReplicaSecret(ctx context.Context) ([]byte, error) {
	b := make([]byte, secretBytes)
	rand.Read(b)
	key := r.prefix + "replicas:secret"
	var got *redis.StringCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, key, hex.EncodeToString(b), 0)
		got = p.Get(ctx, key)
		return nil
	})
	r.observe("replica_secret", err)
	if err != nil {
		return nil, fmt.Errorf("reading the replicas' secret from the store at redis %s: %w", r.addr, redact.Error(err))
	}
	secret, err := hex.DecodeString(got.Val())
	if err != nil || len(secret) != secretBytes {
		return nil, fmt.Errorf("the replicas' secret in the store at redis %s (key %s) is not %d hex bytes: delete the key and the replicas make a new one", r.addr, key, secretBytes)
	}
	return secret, nil
}

// ownerKey is name's owner record.
func (r *Redis) ownerKey(name string) string { return r.prefix + "owner:" + name }
