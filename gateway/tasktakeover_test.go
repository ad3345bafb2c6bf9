package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/store"
	"github.com/mcpbridge/mcpbridge/tool"
)

// followable is a tool whose work another process can follow by id, as
// an MCP server's over HTTP: a resumed call of work "w1" returns once
// release is closed (and closes stopped if it is cancelled first); any
// other id is one the source does not know, answered as a backend
// answers an unknown task (-32602). follows counts the resumed calls.
func followable(release, stopped chan struct{}, follows *atomic.Int32) tool.Tool {
	work := goTool("work", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		follows.Add(1)
		if id := tool.ResumeFrom(ctx); id != "w1" {
			return tool.Output{}, &jsonrpc.Error{Code: -32602, Message: "tasks/get: no task " + id}
		}
		select {
		case <-release:
			return tool.Output{Content: []tool.Content{tool.Text("done by w1")}}, nil
		case <-ctx.Done():
			close(stopped)
			return tool.Output{}, ctx.Err()
		}
	})
	work.Background = true
	return work
}

// strandTask writes, as a replica that then stopped would have, alice's
// working task id whose backend's task is backendTask, its lease about
// to lapse.
func strandTask(t *testing.T, ts *store.Redis, id, backendTask string) {
	t.Helper()
	wire := `{"taskId":"` + id + `","status":"input_required","inputRequests":{"q1":{}},"pollIntervalMs":500}`
	rec := store.TaskRecord{ID: id, Owner: recordOwner("alice"), Version: 7, Wire: []byte(wire), Backend: []byte(`{"tool":"work","task":"` + backendTask + `"}`)}
	if _, err := ts.PutTask(t.Context(), rec, store.PutOptions{Keep: time.Minute, Lease: 20 * time.Millisecond, Holder: "stopped"}); err != nil {
		t.Fatal(err)
	}
}

// A task of a stopped replica whose backend's task can be followed is
// taken over by the replica that reads it: working (its question gone
// with the replica that asked it), then completed with the backend's
// result, read so on every replica; the other replica does not take it
// over again.
func TestGatewaySharedTaskTakenOver(t *testing.T) {
	release, stopped := make(chan struct{}), make(chan struct{})
	var follows atomic.Int32
	reg := tool.NewRegistry()
	if _, err := reg.Register(followable(release, stopped, &follows)); err != nil {
		t.Fatal(err)
	}
	a, b, ts := twoReplicas(t, reg, 300*time.Millisecond)
	const id = "0123456789abcdef0123456789abcde1"
	strandTask(t, ts, id, "w1")
	aliceA := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	aliceB := &rawHTTP{t: t, endpoint: b + "/mcp", token: "alice-secret"}
	waitFor(t, "the task to be taken over", func() bool {
		return strings.Contains(string(aliceA.request("tasks/get", idParams(id)).Result), `"status":"working"`)
	})
	if got := string(aliceB.request("tasks/get", idParams(id)).Result); !strings.Contains(got, `"status":"working"`) || strings.Contains(got, "inputRequests") {
		t.Errorf("the task taken over, read through the other replica: %s", got)
	}
	close(release)
	var got string
	waitFor(t, "the task taken over to complete", func() bool {
		got = string(aliceB.request("tasks/get", idParams(id)).Result)
		return strings.Contains(got, `"status":"completed"`)
	})
	if !strings.Contains(got, "done by w1") {
		t.Errorf("the task taken over: %s", got)
	}
	if n := follows.Load(); n != 1 {
		t.Errorf("the backend's task was followed %d times, want once", n)
	}
	answeredAsUnknown(t, "bob", &rawHTTP{t: t, endpoint: a + "/mcp", token: "bob-secret"}, id, "tasks/get")
}

// A task taken over and cancelled through the other replica stops being
// followed on the replica that took it over, at its next renewal, its
// backend's task stopped, though its following had not reached it yet.
func TestGatewaySharedTaskTakenOverCancelled(t *testing.T) {
	stopped := make(chan struct{})
	var follows atomic.Int32
	reg := tool.NewRegistry()
	if _, err := reg.Register(followable(make(chan struct{}), stopped, &follows)); err != nil {
		t.Fatal(err)
	}
	a, b, ts := twoReplicas(t, reg, 300*time.Millisecond)
	const id = "0123456789abcdef0123456789abcde2"
	strandTask(t, ts, id, "w1")
	aliceA := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	waitFor(t, "the task to be taken over", func() bool {
		return strings.Contains(string(aliceA.request("tasks/get", idParams(id)).Result), `"status":"working"`)
	})
	// Cancelled at once: the following, on a goroutine of its own, may
	// not have reached the backend yet, which stops its task either way.
	aliceB := &rawHTTP{t: t, endpoint: b + "/mcp", token: "alice-secret"}
	if m := aliceB.request("tasks/cancel", idParams(id)); string(m.Result) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel through the other replica: %s %+v, want the extension's bare ack", m.Result, m.Error)
	}
	waitSignal(t, stopped, "the backend's task to stop being followed")
	if got := string(aliceA.request("tasks/get", idParams(id)).Result); !strings.Contains(got, `"status":"cancelled"`) {
		t.Errorf("the task cancelled: %s", got)
	}
}

// A task taken over whose backend no longer knows its task ends failed,
// saying so.
func TestGatewaySharedTaskTakenOverForgotten(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(followable(nil, nil, new(atomic.Int32))); err != nil {
		t.Fatal(err)
	}
	a, _, ts := twoReplicas(t, reg, 300*time.Millisecond)
	const id = "0123456789abcdef0123456789abcde3"
	strandTask(t, ts, id, "w2")
	alice := &rawHTTP{t: t, endpoint: a + "/mcp", token: "alice-secret"}
	var got string
	waitFor(t, "the task to fail", func() bool {
		got = string(alice.request("tasks/get", idParams(id)).Result)
		return strings.Contains(got, `"status":"failed"`)
	})
	if want := "following its backend's task w2 from another replica failed: tasks/get: no task w2"; !strings.Contains(got, want) {
		t.Errorf("the task whose backend forgot it: %s, want %q", got, want)
	}
}

// The replica that takes a task over has its Gate record the end of the
// call for the identity that began it (a Resumer: the Keeper writes its
// audit line), without deciding it again. Its end went unrecorded: the
// replica that began it stopped first.
func TestGatewayTakenOverTaskResumed(t *testing.T) {
	release, stopped := make(chan struct{}), make(chan struct{})
	var follows atomic.Int32
	reg := tool.NewRegistry()
	if _, err := reg.Register(followable(release, stopped, &follows)); err != nil {
		t.Fatal(err)
	}
	_, ts := openTaskStore(t)
	gate := &outcomeGate{sharedGate: sharedGate{ts: ts, lease: 300 * time.Millisecond}, ended: map[string]Outcome{}, resumed: map[string]Outcome{}}
	opts := Options{Stateless: true, Authenticate: aliceOrBob, Gate: gate}
	alice := &rawHTTP{t: t, endpoint: serveHTTP(t, newGateway(t, reg, opts), opts) + "/mcp", token: "alice-secret"}
	const id = "0123456789abcdef0123456789abcde9"
	strandTask(t, ts, id, "w1")
	waitFor(t, "the task to be taken over", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"working"`)
	})
	close(release)
	waitFor(t, "the task taken over to complete", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
	})
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if o, ok := gate.resumed["alice work"]; !ok || o != (Outcome{}) {
		t.Errorf("the calls resumed: %v; want alice's call of work, ended ok", gate.resumed)
	}
	if len(gate.ended) != 0 {
		t.Errorf("the taken-over call entered the Gate again: %v", gate.ended)
	}
}
