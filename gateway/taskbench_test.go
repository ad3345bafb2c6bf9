package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// What a task of the extension costs in stateless mode, from its
// creation to its result read with tasks/get, then dismissed (tasks/cancel): its tasks kept in the
// process (the default), or shared by the replicas in a Redis on the
// same machine.
func BenchmarkStatelessTask(b *testing.B) {
	echo := goTool("echo", textBody("echo"))
	echo.Background = true // a backend's task tool
	reg := tool.NewRegistry()
	if _, err := reg.Register(echo); err != nil {
		b.Fatal(err)
	}
	_, r := openTaskStore(b)
	for _, c := range []struct {
		name string
		gate Gate
	}{{"memory", nil}, {"redis", sharedGate{ts: r, lease: 15 * time.Second}}} {
		b.Run(c.name, func(b *testing.B) {
			url := "http://" + serveBench(b, reg, Options{Stateless: true, Gate: c.gate}) + "/mcp"
			call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},` + declaresTasks + `}}`)
			for b.Loop() {
				var task struct {
					TaskID string `json:"taskId"`
				}
				json.Unmarshal(benchPost(b, url, call), &task)
				get := []byte(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":` + idParams(task.TaskID) + `}`)
				for !bytes.Contains(benchPost(b, url, get), []byte(`"status":"completed"`)) {
				}
				// Dismissed, so that the identity's 16 tasks are never all held.
				benchPost(b, url, []byte(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":`+idParams(task.TaskID)+`}`))
			}
		})
	}
}

// benchPost posts frame to url and returns the result of the answer.
func benchPost(b *testing.B, url string, frame []byte) json.RawMessage {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(frame))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.Result) == 0 || strings.Contains(string(m.Result), `"status":"failed"`) {
		b.Fatalf("%s: %s", frame, body)
	}
	return m.Result
}
