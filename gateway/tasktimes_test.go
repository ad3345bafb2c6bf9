package gateway

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// taskTimes is what a tasks/get tells of a task's times: the 2025-11-25
// names, or the extension's (ttlMs).
type taskTimes struct {
	Status        string          `json:"status"`
	CreatedAt     string          `json:"createdAt"`
	LastUpdatedAt string          `json:"lastUpdatedAt"`
	TTL           json.RawMessage `json:"ttl"`
	TTLMs         json.RawMessage `json:"ttlMs"`
}

// ttlOf is the task's ttl as either shape names it.
func (tt taskTimes) ttlOf() string { return string(tt.TTL) + string(tt.TTLMs) }

// readTimes reads task id's times through c.
func readTimes(t *testing.T, c *rawHTTP, id string) taskTimes {
	t.Helper()
	m := c.request("tasks/get", idParams(id))
	var tt taskTimes
	if m.Error != nil || json.Unmarshal(m.Result, &tt) != nil {
		t.Fatalf("tasks/get %s: %s %+v", id, m.Result, m.Error)
	}
	return tt
}

// endedTimes waits for task id to complete, then reads it again a while
// later through each of readers: its lastUpdatedAt must be when it
// completed, the same on every read, and not before it was created.
func endedTimes(t *testing.T, id string, readers ...*rawHTTP) taskTimes {
	t.Helper()
	var first taskTimes
	waitFor(t, "the task completed", func() bool {
		first = readTimes(t, readers[0], id)
		return first.Status == "completed"
	})
	seenDone := time.Now()
	for _, c := range readers {
		time.Sleep(20 * time.Millisecond)
		if again := readTimes(t, c, id); again.LastUpdatedAt != first.LastUpdatedAt || again.CreatedAt != first.CreatedAt {
			t.Errorf("an ended task's times moved between two polls: %+v, then %+v", first, again)
		}
	}
	created, err1 := time.Parse(time.RFC3339Nano, first.CreatedAt)
	updated, err2 := time.Parse(time.RFC3339Nano, first.LastUpdatedAt)
	if err1 != nil || err2 != nil || updated.Before(created) || updated.After(seenDone) {
		t.Errorf("times %+v: lastUpdatedAt is not when the task completed (seen completed at %s)", first, seenDone.UTC().Format(time.RFC3339Nano))
	}
	return first
}

// quickTaskRegistry is a registry of one background tool that answers at
// once, quick.
func quickTaskRegistry(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry()
	quick := goTool("quick", textBody("done"))
	quick.Background = true
	if _, err := reg.Register(quick); err != nil {
		t.Fatal(err)
	}
	return reg
}

// A task's lastUpdatedAt is when its status last changed, not the time
// of each poll, and a 2025-11-25 client's requested ttl is kept (capped
// at the gateway's 10 minutes, which the task then reads): in memory and
// with tasks kept in redis, for the 2025-11-25 tasks of a session and the
// extension's tasks of stateless HTTP. Every poll read its own time as
// lastUpdatedAt, and every task read a ttl of 10 minutes whatever its
// client asked for.
func TestGatewayTaskTimesAndTTL(t *testing.T) {
	maxTTL := `600000`
	protocol := func(t *testing.T, base string) {
		c := openRawHTTP(t, base, "alice-secret")
		for _, tc := range []struct{ task, ttl string }{
			{`{"ttl":60000}`, `60000`},
			{`{"ttl":3600000}`, maxTTL},
			{`{}`, maxTTL},
		} {
			created := c.request("tools/call", `{"name":"quick","arguments":{},"task":`+tc.task+`}`)
			var r struct{ Task taskTimes }
			if json.Unmarshal(created.Result, &r) != nil || string(r.Task.TTL) != tc.ttl {
				t.Errorf("task %s: created %s, want ttl %s", tc.task, created.Result, tc.ttl)
			}
			if got := endedTimes(t, taskOf(t, created), c); got.ttlOf() != tc.ttl {
				t.Errorf("task %s: tasks/get reads ttl %s, want %s", tc.task, got.ttlOf(), tc.ttl)
			}
		}
	}
	extension := func(t *testing.T, bases ...string) {
		var readers []*rawHTTP
		for _, base := range bases {
			readers = append(readers, &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret"})
		}
		if got := endedTimes(t, createTask(t, readers[0], "quick"), readers...); got.ttlOf() != maxTTL {
			t.Errorf("tasks/get reads ttlMs %s, want %s", got.ttlOf(), maxTTL)
		}
	}
	t.Run("memory/2025-11-25", func(t *testing.T) {
		opts := Options{Authenticate: aliceOrBob}
		protocol(t, serveHTTP(t, newGateway(t, quickTaskRegistry(t), opts), opts))
	})
	t.Run("memory/extension", func(t *testing.T) {
		opts := Options{Stateless: true, Authenticate: aliceOrBob}
		extension(t, serveHTTP(t, newGateway(t, quickTaskRegistry(t), opts), opts))
	})
	t.Run("redis/2025-11-25", func(t *testing.T) {
		_, a, _, _ := replicaPair(t, quickTaskRegistry(t), Options{Authenticate: aliceOrBob}, time.Minute)
		protocol(t, a)
	})
	t.Run("redis/extension", func(t *testing.T) {
		a, b, _ := twoReplicas(t, quickTaskRegistry(t), time.Minute)
		extension(t, a, b)
	})
}
