package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// handoverGateway is taskGateway holding a task for a 10-minute lease: a
// task taken over within the test was handed over, not left to lapse.
var handoverGateway = strings.Replace(taskGateway, "taskLease: 1s", "taskLease: 10m", 1)

// backendSeen counts what a backend is sent.
type backendSeen struct{ gets, cancels atomic.Int32 }

// count returns next, counting the tasks/get and tasks/cancel requests
// it is sent.
func (s *backendSeen) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"tasks/get"`)):
			s.gets.Add(1)
		case bytes.Contains(body, []byte(`"tasks/cancel"`)):
			s.cancels.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// taskBackend serves a task-capable backend over HTTP, counting in seen
// what it is sent, and returns its config entry.
func taskBackend(t *testing.T, seen *backendSeen) string {
	fixture := mcppeer.NewTaskServer()
	backend := httptest.NewServer(seen.count(fixture))
	t.Cleanup(func() {
		backend.Close()
		fixture.Close()
	})
	return fmt.Sprintf("- id: tasks\n  name: mcp-client\n  config: {serverName: tasks, transport: streamable-http, url: %q}\n", backend.URL+"/mcp")
}

// slowCompute is a call of the backend's 8-second task tool as a task.
const slowCompute = `{"name":"mcp__tasks__slow_compute","arguments":{"seconds":8,"label":"tides"},` + declaresTasksMeta + `}`

// Three `serve --http --stateless` replicas sharing a real redis-server
// and holding their tasks for a 10-minute lease, in front of a
// task-capable backend over HTTP. The replica running a task is stopped
// in order (SIGTERM, as a rolling deploy does) once the task's record
// names the backend's task: it exits having given the task's lease up
// (the record still working, its backend kept, no lease: well before the
// 10 minutes), a survivor takes the task over and the client reads it
// complete with the backend's result; the backend never saw a
// tasks/cancel.
func TestServeReplicasHandOverBackendTaskOnSIGTERM(t *testing.T) {
	t.Parallel()
	srv := mcptest.StartRedis(t)
	var seen backendSeen
	cfg := writeConfig(t, taskBackend(t, &seen)+fmt.Sprintf(handoverGateway, srv.URL(), t.Name()))
	replicas, _ := startReplicas(t, twoIdentities, "--stateless", "--config", cfg)
	records, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	defer records.Close()

	id := createdTask(t, replicas[0].url, slowCompute)
	backendTaskRecorded(t, records, id)
	stopped := time.Now()
	replicas[0].stop(t)
	exited := time.Since(stopped)
	rec, _, err := records.GetTask(t.Context(), id)
	if err != nil || rec.Ended || rec.Leased || len(rec.Backend) == 0 || !strings.Contains(string(rec.Wire), `"status":"working"`) {
		t.Fatalf("the task of the replica stopped, once it exited: ended %v, leased %v, backend %s, %s (%v); want working, its lease given up, its backend kept\n%s",
			rec.Ended, rec.Leased, rec.Backend, rec.Wire, err, replicas[0].stderr)
	}
	if !strings.Contains(replicas[0].stderr.String(), "a task is handed over to the other replicas") {
		t.Errorf("the replica stopped does not say it handed the task over:\n%s", replicas[0].stderr)
	}

	got := endThrough(t, replicas[1:], id, "the task handed over to end")
	t.Logf("the replica exited %v after SIGTERM, its task's lease given up; the task read ended %v after SIGTERM (the backend's task lasts 8 s)", exited, time.Since(stopped))
	if !strings.Contains(string(got), `"status":"completed"`) || !strings.Contains(string(got), "computed tides") {
		t.Errorf("the task handed over: %s", got)
	}
	if n := seen.cancels.Load(); n != 0 {
		t.Errorf("the backend was sent %d tasks/cancel, want none", n)
	}
	oneTookOver(t, replicas[1:])
}

// Three replicas sharing a real redis-server in front of
// server-everything's task tool over stdio: the backend's task belongs
// to the stopped replica's child and no other replica can follow it, so
// a replica stopped in order (SIGTERM) still cancels it, and the task
// reads ended on the survivors, saying the gateway shut down; it is not
// left for a survivor to take over.
func TestServeReplicasStdioTaskCancelledOnSIGTERM(t *testing.T) {
	t.Parallel()
	srv := mcptest.StartRedis(t)
	everything := fmt.Sprintf("- id: everything\n  name: mcp-client\n  config: {serverName: everything, transport: stdio, command: %s, args: [stdio]}\n",
		mcptest.ThirdPartyBin(t, "mcp-server-everything"))
	cfg := writeConfig(t, everything+fmt.Sprintf(handoverGateway, srv.URL(), t.Name()))
	replicas, _ := startReplicas(t, twoIdentities, "--stateless", "-v", "--config", cfg) // -v: the log says when the child made its task
	call := `{"name":"mcp__everything__simulate-research-query","arguments":{"topic":"tides"},` + declaresTasksMeta + `}`
	id := createdTask(t, replicas[0].url, call)
	mcptest.Eventually(t, 20*time.Second, func() bool { return strings.Contains(replicas[0].stderr.String(), `msg="task created"`) },
		"the child's task (the replica's debug log)")
	replicas[0].stop(t)
	got, errMsg := rawCall(t, replicas[1].url, "ci-static-token", "tasks/get", taskParams(id))
	t.Logf("the stdio task of the replica stopped, read through another: %s", got)
	if strings.Contains(string(got), `"status":"working"`) || !strings.Contains(string(got), "the gateway is shutting down") {
		t.Errorf("the stdio task of the replica stopped, read through another: %s %s; want it ended, saying the gateway shut down", got, errMsg)
	}
	if strings.Contains(replicas[0].stderr.String(), "handed over") {
		t.Errorf("the replica stopped handed over a task no other replica can follow:\n%s", replicas[0].stderr)
	}
}

// noStoreGateway is taskGateway without a store.
const noStoreGateway = `- id: gw
  name: gateway
  config:
    auth: {tokens: {ci: GW_CI_AUTH, other: GW_OTHER_AUTH}}
`

// Without a store no other replica can read a task: a replica stopped
// in order (SIGTERM) cancels its task at the HTTP backend, as before.
func TestServeWithoutStoreCancelsBackendTaskOnSIGTERM(t *testing.T) {
	var seen backendSeen
	cfg := writeConfig(t, taskBackend(t, &seen)+noStoreGateway)
	p := startServing(t, twoIdentities, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", cfg)
	mcptest.Eventually(t, 30*time.Second, func() bool { return ready(p) }, "%s to be ready", p.url)
	createdTask(t, p.url, slowCompute)
	mcptest.Eventually(t, 20*time.Second, func() bool { return seen.gets.Load() > 0 }, "the backend's task to be followed")
	p.stop(t)
	if n := seen.cancels.Load(); n != 1 {
		t.Errorf("the backend was sent %d tasks/cancel, want 1: without a store the task is cancelled\n%s", n, p.stderr)
	}
}
