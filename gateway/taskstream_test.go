package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A task made over stateful HTTP outlives the POST that made it: its
// call belongs to no request stream, so the POST ending while the call
// runs (here a batch's other call keeps the POST open until the task's
// tool has started) gives up on nothing, however long after the POST's
// resume grace the task ends; its result is collected later.
func TestGatewayHTTPTaskOutlivesItsPOST(t *testing.T) {
	reg := tool.NewRegistry()
	started, release, cancelled := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	if _, err := reg.Register(goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		close(started)
		select {
		case <-release:
			return tool.Output{Content: []tool.Content{tool.Text("released")}}, nil
		case <-ctx.Done():
			cancelled <- context.Cause(ctx)
			return tool.Output{}, ctx.Err()
		}
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(goTool("until", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-started:
		case <-ctx.Done():
		}
		return tool.Output{Content: []tool.Content{tool.Text("started")}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "tok", ResumeGrace: 20 * time.Millisecond}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := openRawHTTP(t, base, "tok")

	// A batch (2025-03-26): the task, and a call that answers once the
	// task's tool runs.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","arguments":{},"task":{}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"until","arguments":{}}}]`
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var task wireMessage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m wireMessage
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &m) == nil && string(m.ID) == "1" {
			task = m
		}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := taskOf(t, task)
	waitSignal(t, started, "the task's tool started")

	select {
	case err := <-cancelled:
		t.Fatalf("the task's call ended with its POST: %v", err)
	case <-time.After(10 * opts.ResumeGrace):
	}
	close(release)
	if res := c.request("tasks/result", idParams(id)); !strings.Contains(string(res.Result), "released") {
		t.Errorf("tasks/result: %s %+v", res.Result, res.Error)
	}
}

// Over stateful HTTP, what a task's call sends once the POST that made
// the task was answered (its progress) reaches the client on the
// session's stream, as its questions do: it belongs to the task, not to
// the long-answered request.
func TestGatewayHTTPTaskProgressReachesItsClient(t *testing.T) {
	reg := tool.NewRegistry()
	release := make(chan struct{})
	if _, err := reg.Register(goTool("steps", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		<-release
		tool.ReportProgress(ctx, tool.Progress{Progress: 1, Total: 2, Message: "half"})
		return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "tok"}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := openRawHTTP(t, base, "tok")
	stream := c.do(http.MethodGet)
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("the GET stream: status %d", stream.StatusCode)
	}

	id := taskOf(t, c.request("tools/call", `{"name":"steps","arguments":{},"_meta":{"progressToken":"p1"},"task":{}}`))
	close(release)
	stop := time.AfterFunc(testTimeout, func() { stream.Body.Close() }) // a progress that never comes fails the read
	defer stop.Stop()
	var note wireMessage
	body := bufio.NewReader(stream.Body)
	for note.Method != "notifications/progress" {
		note = wireMessage{}
		if err := json.Unmarshal([]byte(sseField(t, body, "data")), &note); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(note.Params), `"progressToken":"p1"`) || !strings.Contains(string(note.Params), `"half"`) {
		t.Errorf("the progress: %s", note.Params)
	}
	if res := c.request("tasks/result", idParams(id)); !strings.Contains(string(res.Result), "done") {
		t.Errorf("tasks/result: %s %+v", res.Result, res.Error)
	}
}

// A stateless 2026-07-28 call as a task passes the transport's checks
// as any call does: one whose Mcp-Name header names another tool than
// its body is refused (400, -32020), and no task is made nor the tool
// run.
func TestGatewayStatelessTaskCallHeadersChecked(t *testing.T) {
	reg := tool.NewRegistry()
	ran := make(chan struct{}, 1)
	job := goTool("job", func(context.Context, json.RawMessage) (tool.Output, error) {
		ran <- struct{}{}
		return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
	})
	job.Background = true
	if _, err := reg.Register(job, goTool("other", textBody("other"))); err != nil {
		t.Fatal(err)
	}
	base := serveHTTP(t, newGateway(t, reg, Options{}), Options{})
	c := &rawHTTP{t: t, endpoint: base + "/mcp", perRequest: true}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{},` + meta2026 + `}}`
	header := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"other"}}
	m, resp := c.postWith(call, header)
	if resp.StatusCode != http.StatusBadRequest || m.Error == nil || !strings.Contains(m.Error.Message, `"code":-32020`) {
		t.Errorf("a call whose Mcp-Name is another tool's: status %d, result %s, error %+v", resp.StatusCode, m.Result, m.Error)
	}
	header.Set("Mcp-Name", "job")
	if m, _ := c.postWith(call, header); !strings.Contains(string(m.Result), `"resultType":"task"`) {
		t.Fatalf("the same call with its own name: %s %+v", m.Result, m.Error)
	}
	waitSignal(t, ran, "the task's tool to run")
	select {
	case <-ran:
		t.Error("the refused call ran its tool too")
	case <-time.After(100 * time.Millisecond):
	}
}

// waitingAnswers counts the goroutines waiting in a task store's Answer
// (a blocking tasks/result).
func waitingAnswers() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "tasks.(*Store).Answer(")
}

// Over stateful HTTP, a tasks/result waiting for its task ends when its
// client leaves and does not resume the request's stream within the
// grace, as a call does: it is not left waiting for the task's end.
func TestGatewayHTTPTaskResultEndsWithItsClient(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{BearerToken: "tok", ResumeGrace: 20 * time.Millisecond}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := openRawHTTP(t, base, "tok")
	id := taskOf(t, c.request("tools/call", `{"name":"hold","arguments":{},"task":{}}`))
	before := waitingAnswers()

	ctx, leave := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":`+idParams(id)+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitFor(t, "tasks/result waiting", func() bool { return waitingAnswers() > before })
	leave()
	<-done
	waitFor(t, "the wait to end with its client", func() bool { return waitingAnswers() == before })
	if st := c.request("tasks/get", idParams(id)); !strings.Contains(string(st.Result), `"status":"working"`) {
		t.Errorf("the task after its tasks/result left: %s %+v", st.Result, st.Error)
	}
}
