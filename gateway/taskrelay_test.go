package gateway

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway's relay of a backend's tasks (2026-07-28 extension), as a
// client of `serve --http --stateless --raw-names` in front of a task
// server meets it: each test below failed through the gateway while the
// task server alone passed it (TestConformanceTasksThroughGateway).

// taskServerGateway serves mcppeer's task server and, in front of it,
// a stateless gateway with raw names (`serve --http --stateless
// --raw-names`), and returns the URLs of both endpoints.
func taskServerGateway(t *testing.T) (backend, gateway string) {
	t.Helper()
	_, backend, gateway = taskServerGatewayOf(t)
	return backend, gateway
}

// taskServerGatewayOf is taskServerGateway, with the gateway itself.
func taskServerGatewayOf(t *testing.T) (g *Gateway, backend, gateway string) {
	t.Helper()
	tasks := mcppeer.NewTaskServer()
	t.Cleanup(tasks.Close)
	hs := httptest.NewServer(tasks)
	t.Cleanup(hs.Close)
	reg := tool.NewRegistry()
	startClient(t, mcpclient.Config{ServerName: "tasks", Transport: mcpclient.TransportStreamableHTTP, URL: hs.URL},
		mcpclient.Options{Registry: reg, Elicit: true, Sample: true})
	opts := Options{RawNames: true, Stateless: true}
	g = newGateway(t, reg, opts)
	return g, hs.URL, serveHTTP(t, g, opts) + "/mcp"
}

// taskRelay is a 2026-07-28 client of a stateless gateway with raw names
// in front of mcppeer's task server.
func taskRelay(t *testing.T) *rawHTTP {
	t.Helper()
	_, gateway := taskServerGateway(t)
	return relayClient(t, gateway)
}

// relayClient is taskRelay's client of the gateway at endpoint.
func relayClient(t *testing.T, endpoint string) *rawHTTP {
	t.Helper()
	c := &rawHTTP{t: t, endpoint: endpoint, perRequest: true}
	waitFor(t, "the task server's tools served", func() bool {
		return strings.Contains(string(c.request("tools/list", `{`+meta2026+`}`).Result), `"multi_input"`)
	})
	return c
}

// extCallParams are the params of a tools/call of name with args from a
// client that declares the tasks extension.
func extCallParams(name, args string) string {
	return `{"name":"` + name + `","arguments":` + args + `,` + meta2026 + `}`
}

// A backend task that fails with a JSON-RPC error reads failed, the
// error inline with its code, and no result: it read completed, with an
// isError result.
func TestGatewayRelaysFailedBackendTask(t *testing.T) {
	c := taskRelay(t)
	id := createdTask(t, c.request("tools/call", extCallParams("protocol_error_job", `{}`)), true)
	got := awaitTask(t, c, id, "failed")
	var task struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(got.Result, &task); err != nil || task.Error == nil || task.Error.Code != -32603 ||
		!strings.Contains(task.Error.Message, "the job crashed") || task.Result != nil {
		t.Errorf("the failed task reads %s; want error -32603 \"the job crashed\" and no result", got.Result)
	}
}

// tasks/cancel answers the extension's bare ack, a running task then
// reads cancelled (it read "no task": cancelling dismissed it), and a
// completed one keeps its end and result (cancelling is idempotent).
func TestGatewayCancelsRelayedTaskAsExtension(t *testing.T) {
	c := taskRelay(t)
	ack := func(id string) {
		t.Helper()
		if m := c.request("tasks/cancel", idParams(id)); m.Error != nil || string(m.Result) != `{"resultType":"complete"}` {
			t.Errorf("tasks/cancel of %s: %s %+v; want the bare ack {\"resultType\":\"complete\"}", id, m.Result, m.Error)
		}
	}
	slow := createdTask(t, c.request("tools/call", extCallParams("slow_compute", `{"seconds":60,"label":"slow"}`)), true)
	ack(slow)
	awaitTask(t, c, slow, "cancelled")
	ack(slow)
	quick := createdTask(t, c.request("tools/call", extCallParams("slow_compute", `{"seconds":0,"label":"quick"}`)), true)
	awaitTask(t, c, quick, "completed")
	ack(quick)
	if got := c.request("tasks/get", idParams(quick)); !strings.Contains(string(got.Result), `"status":"completed"`) || !strings.Contains(string(got.Result), "computed quick") {
		t.Errorf("a completed task cancelled reads %s %+v; want it completed, its result kept", got.Result, got.Error)
	}
}

// metaNoTasks is the _meta of a 2026-07-28 request from a client that
// declares no capability, the tasks extension included.
const metaNoTasks = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}`

// A tool whose taskSupport is "required", called by a client that did not
// declare the extension, is refused with the backend's -32021 (HTTP 400),
// naming the capability: it ran, the bridge following the backend's task
// for a client that cannot hold one. A task-optional tool still runs at
// once for it.
func TestGatewayRefusesRequiredTaskWithoutExtension(t *testing.T) {
	c := taskRelay(t)
	m := c.request("tools/call", `{"name":"failing_job","arguments":{},`+metaNoTasks+`}`)
	if m.Error == nil || m.Error.Code != 400 {
		t.Fatalf("a task-required tool called without the extension: %s %+v; want HTTP 400", m.Result, m.Error)
	}
	refusedWith(t, "a task-required tool called without the extension", inBody(m), -32021)
	if !strings.Contains(m.Error.Message, `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("the refusal names no capability: %s", m.Error.Message)
	}
	got := c.request("tools/call", `{"name":"slow_compute","arguments":{"seconds":0,"label":"now"},`+metaNoTasks+`}`)
	if got.Error != nil || !strings.Contains(string(got.Result), "computed now") || strings.Contains(string(got.Result), "taskId") {
		t.Errorf("a task-optional tool called without the extension: %s %+v; want its result at once", got.Result, got.Error)
	}
}

// A backend task that asks two questions at once shows both in one
// tasks/get, under the backend's keys; answered one at a time, the
// answered key leaves and the task waits for the other, then completes
// with both answers. The gateway showed one question at a time, under
// keys of its own (q1).
func TestGatewayRelaysTaskRoundAtOnce(t *testing.T) {
	c := taskRelay(t)
	id := createdTask(t, c.request("tools/call", extCallParams("multi_input", `{}`)), true)
	pending := func() (string, []string) {
		var task struct {
			Status        string                     `json:"status"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		}
		json.Unmarshal(c.request("tasks/get", idParams(id)).Result, &task)
		return task.Status, slices.Sorted(maps.Keys(task.InputRequests))
	}
	waitFor(t, "the task asking", func() bool { status, _ := pending(); return status == "input_required" })
	if status, keys := pending(); !slices.Equal(keys, []string{"first", "second"}) {
		t.Fatalf("the task %s asks %q; want both questions under the backend's keys", status, keys)
	}
	answer := func(key string) {
		t.Helper()
		m := c.request("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{"confirm":"yes"}}},`+declaresTasks+`}`)
		if m.Error != nil {
			t.Fatalf("tasks/update %s: %+v", key, m.Error)
		}
	}
	answer("first")
	waitFor(t, "the first answer taken", func() bool { _, keys := pending(); return slices.Equal(keys, []string{"second"}) })
	if status, _ := pending(); status != "input_required" {
		t.Errorf("half answered, the task is %s; want input_required", status)
	}
	answer("second")
	if got := awaitTask(t, c, id, "completed"); !strings.Contains(string(got.Result), "answered 2 input requests") {
		t.Errorf("the task's result: %s", got.Result)
	}
}

// metaElicits is the _meta of a 2026-07-28 request from a client that
// declares elicitation and the tasks extension.
const metaElicits = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// A backend that asks before it makes a task (input-required rounds,
// then a task on the final round) is relayed as it answers: the first
// round reaches the client as an input-required result with the
// backend's key and a requestState, and no task; the call again with the
// answer becomes the gateway's task, which completes with the answer
// gathered. The gateway made its task at once, the backend's round
// hidden in it. A requestState tampered with is refused.
func TestGatewayRelaysRoundsBeforeTask(t *testing.T) {
	g, _, endpoint := taskServerGatewayOf(t)
	c := relayClient(t, endpoint)
	var round struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		TaskID        string                     `json:"taskId"`
	}
	m := c.request("tools/call", `{"name":"test_tool_with_task","arguments":{},`+metaElicits+`}`)
	if err := json.Unmarshal(m.Result, &round); err != nil || round.ResultType != "input_required" || round.InputRequests["user_name"] == nil || !strings.HasPrefix(round.RequestState, "mcpbridge.") || round.TaskID != "" {
		t.Fatalf("the first round: %s %+v; want input_required asking user_name, with a requestState of the gateway's and no task", m.Result, m.Error)
	}
	again := func(state string) wireMessage {
		return c.request("tools/call", `{"name":"test_tool_with_task","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},"requestState":"`+state+`",`+metaElicits+`}`)
	}
	// Parked between rounds, the call holds the one slot its first round
	// took, and a refused retry takes none.
	refusedWith(t, "a tampered requestState", inBody(again(round.RequestState+"x")), -32602)
	if n := inFlight(g); n != 1 {
		t.Errorf("%d calls in flight while the call is parked; want its one slot", n)
	}
	created := again(round.RequestState)
	id := createdTask(t, created, true)
	if strings.Contains(string(created.Result), "requestState") || strings.Contains(string(created.Result), "inputRequests") {
		t.Errorf("the created task carries the round's fields: %s", created.Result)
	}
	if got := awaitTask(t, c, id, "completed"); !strings.Contains(string(got.Result), "Hello, Alice!") {
		t.Errorf("the task's result: %s", got.Result)
	}
	waitFor(t, "the slot given back once the task ended", func() bool { return inFlight(g) == 0 })
}

// inFlight is the number of calls holding a slot of g.
func inFlight(g *Gateway) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// A 2026-07-28 request's capabilities are read from its _meta as the
// SDK's session reads them (serverwire.DecodeCapabilities, parity check
// P7): roots in that revision's form, `{}`, are roots offered, so a
// relayed task's backend may ask for them.
func TestRequestCapabilitiesAsTheSDK(t *testing.T) {
	for _, raw := range []string{`{"roots":{}}`, `{"roots":{"listChanged":true}}`, `{"sampling":{},"elicitation":{}}`, `{}`} {
		var meta map[string]any
		if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/clientCapabilities":`+raw+`}`), &meta); err != nil {
			t.Fatal(err)
		}
		got := requestCapabilities(callRequest{params: &mcp.CallToolParamsRaw{Meta: meta}})
		want, err := serverwire.DecodeCapabilities(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || offersRoots(got) != strings.Contains(raw, "roots") {
			t.Errorf("%s: read as %+v (offers roots: %v), the SDK's session has %+v", raw, got, offersRoots(got), want)
		}
	}
}
