package gateway

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Replicas that apply different configs. Behind one balancer, a replica
// whose config file was not updated (or whose reload was refused) keeps
// its old policy, and a client's call is allowed on one replica and
// denied on another. Each replica therefore records, with its other
// records in the store, the digest of the config it applies
// (Options.ConfigDigest) under its tag, reads everyone's at each renewal,
// and /healthz warns while the live replicas do not all agree: a warning
// only, since a rolling update passes through that state.

// ReplicaConfigs is a SessionOwners that also keeps which config each
// replica applies (store.Redis).
type ReplicaConfigs interface {
	// PutReplicaConfig records digest as the config of the replica tagged
	// tag, for ttl, and returns every live replica's digest by tag.
	PutReplicaConfig(ctx context.Context, tag, digest string, ttl time.Duration) (map[string]string, error)
	// DropReplicaConfig forgets the config of the replica tagged tag.
	DropReplicaConfig(ctx context.Context, tag string) error
}

// configCheck is how often a replica looks for a change of its config
// or its store between two renewals, to record it at once: the others
// read it at their next renewal.
const configCheck = time.Second

// replicaConfigs is what this replica last read of the replicas'
// configs.
type replicaConfigs struct {
	mu  sync.Mutex
	own string // this replica's digest, as recorded
	// tried and triedIn are the digest last written and where, whether
	// or not the store answered: a store out of reach is tried again at
	// the next renewal, not at every check.
	tried   string
	triedIn ReplicaConfigs
	live    map[string]string // every live replica's digest by tag, its own included
	at      time.Time         // when live was read
	// differ reports that the replicas' configs were last seen to differ
	// (and the log said so).
	differ bool
}

// shortDigest is how a digest is shown.
func shortDigest(d string) string { return d[:min(len(d), 12)] }

// renewConfig records the digest of the config this replica applies in
// the store, with its other records, reads the other replicas', and logs
// when they start or stop differing. Without a store, or a digest, it
// forgets what it read.
func (g *Gateway) renewConfig() {
	if g.opts.ConfigDigest == nil {
		return
	}
	owners, _ := g.sessionOwners()
	store, ok := owners.(ReplicaConfigs)
	digest := g.opts.ConfigDigest()
	if !ok || digest == "" {
		g.noteConfigs("", nil)
		return
	}
	g.configs.mu.Lock()
	g.configs.tried, g.configs.triedIn = digest, store
	g.configs.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	live, err := store.PutReplicaConfig(ctx, g.parked.tag, digest, ownerTTL)
	if err != nil {
		// /healthz lists the store degraded; the warning lapses with what
		// was read (configDrift).
		g.log.Debug("gateway store: recording the config this replica applies", "err", err)
		return
	}
	g.noteConfigs(digest, live)
}

// configRecorded reports whether the config this replica applies now
// was written to its store last (renewConfig), or it has neither a store
// nor a digest.
func (g *Gateway) configRecorded() bool {
	owners, _ := g.sessionOwners()
	store, _ := owners.(ReplicaConfigs)
	digest := ""
	if store != nil && g.opts.ConfigDigest != nil {
		digest = g.opts.ConfigDigest()
	}
	rc := &g.configs
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.tried == digest && (digest == "" || rc.triedIn == store)
}

// noteConfigs keeps live, the replicas' digests read now, this one's
// being own, and logs once when they start to differ and once when they
// agree again.
func (g *Gateway) noteConfigs(own string, live map[string]string) {
	rc := &g.configs
	rc.mu.Lock()
	rc.own, rc.live, rc.at = own, live, time.Now()
	if own == "" {
		rc.tried, rc.triedIn = "", nil
	} else {
		rc.live[g.parked.tag] = own
	}
	why, differ := rc.driftLocked()
	was := rc.differ
	rc.differ = differ
	rc.mu.Unlock()
	switch {
	case differ && !was:
		g.log.Warn("gateway store: "+why, "config", shortDigest(own))
	case !differ && was && own == "":
		g.log.Info("gateway store: the replicas' configs are no longer compared: this replica has no store now")
	case !differ && was:
		g.log.Info("gateway store: the replicas apply one config again", "config", shortDigest(own), "replicas", len(live))
	}
}

// dropConfig forgets this replica's config in the store as it stops, so
// that the others stop counting it at once, not a record's ttl later.
func (g *Gateway) dropConfig() {
	owners, _ := g.sessionOwners()
	store, ok := owners.(ReplicaConfigs)
	if !ok || g.opts.ConfigDigest == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeWait)
	defer cancel()
	if err := store.DropReplicaConfig(ctx, g.parked.tag); err != nil {
		g.log.Debug("gateway store: forgetting the config of this replica as it stops", "err", err)
	}
}

// configDrift is /healthz's warning while the live replicas, as last
// read, do not all apply this replica's config; ok is false otherwise.
// It stays OK: a rolling update passes through it.
func (g *Gateway) configDrift() (b BackendState, ok bool) {
	rc := &g.configs
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if time.Since(rc.at) > ownerTTL {
		return BackendState{}, false // not read lately: not known
	}
	why, differ := rc.driftLocked()
	if !differ {
		return BackendState{}, false
	}
	return NewBackendState("replica configs", "differ", true, 0, why), true
}

// ReplicaConfigs is the number of different configs the live replicas
// apply, as this replica last read them: 1 when they agree, 0 when not
// known (no store, or not read lately).
func (g *Gateway) ReplicaConfigs() int {
	rc := &g.configs
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.own == "" || time.Since(rc.at) > ownerTTL {
		return 0
	}
	return len(countConfigs(rc.live))
}

// driftLocked says how the replicas' configs differ: "replicas apply 2
// different configs: this one D1 (N replicas), other D2 (M)"; differ is
// false when they all apply this one's. rc.mu is held.
func (rc *replicaConfigs) driftLocked() (why string, differ bool) {
	counts := countConfigs(rc.live)
	if rc.own == "" || len(counts) < 2 {
		return "", false
	}
	others := slices.Collect(maps.Keys(counts))
	others = slices.DeleteFunc(others, func(d string) bool { return d == rc.own })
	slices.SortFunc(others, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	var b strings.Builder
	fmt.Fprintf(&b, "replicas apply %d different configs: this one %s (%s)", len(counts), shortDigest(rc.own), replicasCount(counts[rc.own]))
	for _, d := range others {
		fmt.Fprintf(&b, ", other %s (%d)", shortDigest(d), counts[d])
	}
	b.WriteString("; expected during a rolling update, else compare the replicas' config files and look for a refused reload in each one's /healthz")
	return b.String(), true
}

// countConfigs counts the replicas of live by digest.
func countConfigs(live map[string]string) map[string]int {
	counts := map[string]int{}
	for _, d := range live {
		counts[d]++
	}
	return counts
}

// replicasCount is "1 replica", "N replicas".
func replicasCount(n int) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}
