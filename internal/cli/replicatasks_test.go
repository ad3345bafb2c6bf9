package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// taskGateway is a gateway entry of two identities whose tasks are
// shared in the Redis at %s, each replica holding a task it runs for a
// 1s lease.
const taskGateway = `- id: gw
  name: gateway
  config:
    auth: {tokens: {ci: GW_CI_AUTH, other: GW_OTHER_AUTH}}
    store: {redis: {url: "%s", keyPrefix: "%s:"}, taskLease: 1s}
`

// declaresTasksMeta is the _meta of a request from a 2026-07-28 client
// that declares the tasks extension.
const declaresTasksMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// Three `serve --http --stateless` replicas sharing a real redis-server,
// in front of server-everything's task tool (four stages of a second):
// a task made through one replica is read through each of the others
// and through a round-robin balancer until it completes, and another
// identity gets what a made-up id gets. Then the replica running a
// second task is killed (SIGKILL): the task ends failed, saying its
// replica stopped, within its lease, never working forever.
func TestServeReplicasShareTasks(t *testing.T) {
	t.Parallel()
	srv := mcptest.StartRedis(t)
	everything := fmt.Sprintf("- id: everything\n  name: mcp-client\n  config: {serverName: everything, transport: stdio, command: %s, args: [stdio]}\n",
		mcptest.ThirdPartyBin(t, "mcp-server-everything"))
	cfg := writeConfig(t, everything+fmt.Sprintf(taskGateway, srv.URL(), t.Name()))
	replicas, urls := startReplicas(t, twoIdentities, "--stateless", "--config", cfg)
	balancer := httptest.NewServer(newRoundRobin(t, urls...).proxy())
	defer balancer.Close()
	call := `{"name":"mcp__everything__simulate-research-query","arguments":{"topic":"tides"},` + declaresTasksMeta + `}`
	id := createdTask(t, replicas[0].url, call)
	for _, p := range replicas[1:] {
		if got, errMsg := rawCall(t, p.url, "ci-static-token", "tasks/get", taskParams(id)); !strings.Contains(string(got), `"status":"working"`) {
			t.Errorf("tasks/get through %s: %s %s", p.url, got, errMsg)
		}
		_, unknown := rawCall(t, p.url, "other-static-token", "tasks/get", taskParams("0123456789abcdef0123456789abcdef"))
		if _, errMsg := rawCall(t, p.url, "other-static-token", "tasks/get", taskParams(id)); errMsg == "" || strings.ReplaceAll(errMsg, id, "0123456789abcdef0123456789abcdef") != unknown {
			t.Errorf("another identity's tasks/get through %s: %q, want what a made-up id gets: %q", p.url, errMsg, unknown)
		}
	}
	var got json.RawMessage
	mcptest.Eventually(t, 30*time.Second, func() bool {
		got, _ = rawCall(t, balancer.URL+"/mcp", "ci-static-token", "tasks/get", taskParams(id))
		return strings.Contains(string(got), `"status":"completed"`)
	}, "the task to complete, read through the balancer")
	if !strings.Contains(string(got), "# Research Report: tides") {
		t.Errorf("the completed task: %s", got)
	}
	// The counter follows the write it counts: the completed task may be
	// read from the store a moment before it is.
	mcptest.Eventually(t, 5*time.Second, func() bool { return storeOps(t, replicas[0])["put_task"] >= 2 },
		"the running replica to count its writes of the task, one per change (made, stages, completed)")
	if n := storeOps(t, replicas[1])["get_task"]; n < 1 {
		t.Errorf("another replica counts %v reads of tasks", n)
	}

	id = createdTask(t, replicas[0].url, call)
	if err := replicas[0].signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	polls := 0
	mcptest.Eventually(t, 20*time.Second, func() bool {
		polls++ // the surviving replicas in turn: the balancer still sends to the killed one
		got, _ = rawCall(t, replicas[1+polls%2].url, "ci-static-token", "tasks/get", taskParams(id))
		return len(got) > 0 && !strings.Contains(string(got), `"status":"working"`)
	}, "the task of the killed replica to end")
	t.Logf("the task of the killed replica ended %v after the kill: %s", time.Since(killed), got)
	if !strings.Contains(string(got), `"status":"failed"`) || !strings.Contains(string(got), "the gateway replica running this task stopped before it ended") {
		t.Errorf("the task of the killed replica: %s", got)
	}
}

// createdTask calls as a task through the replica at url (retrying until
// its backend is served) and returns the task's id.
func createdTask(t *testing.T, url, call string) string {
	t.Helper()
	var task struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	var got json.RawMessage
	var errMsg string
	mcptest.Eventually(t, 30*time.Second, func() bool {
		got, errMsg = rawCall(t, url, "ci-static-token", "tools/call", call)
		return json.Unmarshal(got, &task) == nil && task.ResultType == "task" && task.TaskID != ""
	}, "a task to be made through %s (last answer %s %s)", url, got, errMsg)
	return task.TaskID
}

func taskParams(id string) string { return `{"taskId":"` + id + `",` + declaresTasksMeta + `}` }

// rawCall posts one request to the stateless endpoint url as token's
// identity and returns its result, or its error's message.
func rawCall(t *testing.T, url, token, method, params string) (json.RawMessage, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, fmt.Sprintf("HTTP %d: %v", resp.StatusCode, err)
	}
	if m.Error != nil {
		return nil, m.Error.Message
	}
	return m.Result, ""
}

// storeOps are p's counts of store calls that worked, by operation.
func storeOps(t *testing.T, p *servingProcess) map[string]float64 {
	t.Helper()
	ops := map[string]float64{}
	for _, c := range scrape(t, p.base()+"/metrics", "ci-static-token")["mcpbridge_store_calls_total"].GetMetric() {
		var op, outcome string
		for _, l := range c.GetLabel() {
			switch l.GetName() {
			case "op":
				op = l.GetValue()
			case "outcome":
				outcome = l.GetValue()
			}
		}
		if outcome == "ok" {
			ops[op] += c.GetCounter().GetValue()
		}
	}
	return ops
}
