package cli

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// Three `serve --http --stateless` replicas sharing a real redis-server,
// in front of a task-capable backend over HTTP (slow_compute runs as the
// backend's own task for 8 seconds). The replica running a task is
// killed (SIGKILL) once the task's record names the backend's task: a
// surviving replica takes the task over, follows the backend's task, and
// the client, polling the survivors, reads it complete with its result.
func TestServeReplicasTakeOverBackendTask(t *testing.T) {
	t.Parallel()
	srv := mcptest.StartRedis(t)
	fixture := mcppeer.NewTaskServer()
	backend := httptest.NewServer(fixture)
	defer backend.Close()
	defer fixture.Close()
	entry := fmt.Sprintf("- id: tasks\n  name: mcp-client\n  config: {serverName: tasks, transport: streamable-http, url: %q}\n", backend.URL+"/mcp")
	cfg := writeConfig(t, entry+fmt.Sprintf(taskGateway, srv.URL(), t.Name()))
	replicas, _ := startReplicas(t, twoIdentities, "--stateless", "--config", cfg)
	records, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	defer records.Close()

	call := `{"name":"mcp__tasks__slow_compute","arguments":{"seconds":8,"label":"tides"},` + declaresTasksMeta + `}`
	id := createdTask(t, replicas[0].url, call)
	if rec := backendTaskRecorded(t, records, id); rec.Ended {
		t.Fatalf("the task ended before its replica was killed: %s", rec.Wire)
	}
	if err := replicas[0].signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := endThrough(t, replicas[1:], id, "the task of the killed replica to end")
	if !strings.Contains(string(got), `"status":"completed"`) || !strings.Contains(string(got), "computed tides") {
		t.Errorf("the task of the killed replica, taken over: %s", got)
	}
	oneTookOver(t, replicas[1:])
	if _, errMsg := rawCall(t, replicas[2].url, "other-static-token", "tasks/get", taskParams(id)); errMsg == "" {
		t.Error("another identity read the task taken over")
	}
}

// backendTaskRecorded waits for task id's record to name its backend's
// task, and returns it.
func backendTaskRecorded(t *testing.T, records *store.Redis, id string) store.TaskRecord {
	t.Helper()
	var rec store.TaskRecord
	var err error
	mcptest.Eventually(t, 20*time.Second, func() bool {
		rec, _, err = records.GetTask(t.Context(), id)
		return err == nil && len(rec.Backend) > 0
	}, "the task's record to name its backend's task")
	return rec
}

// endThrough polls task id through the replicas in turn until it no
// longer reads working, and returns it as last read.
func endThrough(t *testing.T, replicas []*servingProcess, id, what string) json.RawMessage {
	t.Helper()
	var got json.RawMessage
	polls := 0
	mcptest.Eventually(t, 40*time.Second, func() bool {
		polls++
		got, _ = rawCall(t, replicas[polls%len(replicas)].url, "ci-static-token", "tasks/get", taskParams(id))
		return len(got) > 0 && !strings.Contains(string(got), `"status":"working"`)
	}, "%s", what)
	return got
}

// oneTookOver fails t unless exactly one of survivors says it took a
// task over.
func oneTookOver(t *testing.T, survivors []*servingProcess) {
	t.Helper()
	took := 0
	var logs []string
	for _, p := range survivors {
		if strings.Contains(p.stderr.String(), "a task of a stopped replica is taken over") {
			took++
		}
		logs = append(logs, p.stderr.String())
	}
	if took != 1 {
		t.Errorf("%d surviving replicas say they took the task over, want 1:\n%s", took, strings.Join(logs, "\n"))
	}
}
