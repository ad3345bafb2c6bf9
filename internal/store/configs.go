package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpbridge/mcpbridge/internal/redact"
)

// Which config each replica applies: one sorted set (PREFIX
// replicas:configs) whose members are "TAG DIGEST", each scored with the
// time its record lapses on the store's clock (the replicas' clocks do
// not matter), so that a replica that stopped without a word leaves the
// set a record's ttl after its last renewal.

// putReplicaConfig drops the lapsed records of KEYS[1] and every record
// of the replica tagged ARGV[1], then, unless ARGV[2] is "", records
// ARGV[2] as its digest for ARGV[3] ms; it returns the records left.
var putReplicaConfig = redis.NewScript(`
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
local mine = ARGV[1] .. ' '
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 1, #mine) == mine then
    redis.call('ZREM', KEYS[1], m)
  end
end
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[1], t + tonumber(ARGV[3]), mine .. ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// PutReplicaConfig records digest as the config the replica tagged tag
// applies, for ttl (replacing what it recorded before), and returns the
// digest of every replica whose record has not lapsed, by tag, its own
// included.
func (r *Redis) PutReplicaConfig(ctx context.Context, tag, digest string, ttl time.Duration) (map[string]string, error) {
	members, err := putReplicaConfig.Run(ctx, r.client, []string{r.prefix + "replicas:configs"}, tag, digest, max(ttl.Milliseconds(), 1)).StringSlice()
	r.observe("replica_config", err)
	if err != nil {
		return nil, fmt.Errorf("recording this replica's config digest in the store at redis %s: %w", r.addr, redact.Error(err))
	}
	live := make(map[string]string, len(members))
	for _, m := range members {
		if t, d, ok := strings.Cut(m, " "); ok {
			live[t] = d
		}
	}
	return live, nil
}

// DropReplicaConfig forgets the config of the replica tagged tag (it
// stops), so the others no longer count it.
func (r *Redis) DropReplicaConfig(ctx context.Context, tag string) error {
	_, err := r.PutReplicaConfig(ctx, tag, "", time.Millisecond)
	return err
}
