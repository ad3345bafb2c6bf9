package gateway

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// An idSet holds the ids added and not removed, as a map would, however
// many it holds: none, one (no map) or more.
func TestIDSetIsASet(t *testing.T) {
	ids := make([]jsonrpc.ID, 4)
	for i := range ids {
		ids[i], _ = jsonrpc.MakeID(float64(i + 1))
	}
	one, _ := jsonrpc.MakeID("1") // a string id, not the number 1
	ids = append(ids, one)
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		var set idSet
		want := map[jsonrpc.ID]struct{}{}
		for step := range 12 {
			id := ids[rng.IntN(len(ids))]
			if rng.IntN(3) == 0 {
				set.remove(id)
				delete(want, id)
			} else {
				set.add(id)
				want[id] = struct{}{}
			}
			got := slices.Collect(set.all)
			if set.size() != len(want) || !hasAll(want, got) {
				t.Fatalf("run %d step %d: the set holds %v (size %d), want %v", run, step, got, set.size(), slices.Collect(maps.Keys(want)))
			}
		}
	}
}

// hasAll reports whether got is want's ids, each once.
func hasAll(want map[jsonrpc.ID]struct{}, got []jsonrpc.ID) bool {
	seen := map[jsonrpc.ID]bool{}
	for _, id := range got {
		if _, ok := want[id]; !ok || seen[id] {
			return false
		}
		seen[id] = true
	}
	return len(seen) == len(want)
}
