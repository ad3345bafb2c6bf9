package sdkwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// Contract tests: each checks one assumption of the package doc against the
// real SDK. A failure after an SDK upgrade means the assumption broke and
// the code relying on it must change, not the test.

type markerKey struct{}

// Assumption 1.
func TestContractContextReachesWrite(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]any{}
	cs := connectInMemory(t, newServer(nil), nil, nil, func(tr mcp.Transport) mcp.Transport {
		return &spyTransport{Transport: tr, write: func(ctx context.Context, msg jsonrpc.Message) {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				mu.Lock()
				seen[req.Method] = ctx.Value(markerKey{})
				mu.Unlock()
			}
		}}
	})
	ctx := context.WithValue(context.Background(), markerKey{}, "marker")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, method := range []string{"tools/list", "tools/call"} {
		if seen[method] != "marker" {
			t.Errorf("%s: Write saw the context value %v, want the caller's", method, seen[method])
		}
	}
}

// Assumption 2.
func TestContractReadIsDecoded(t *testing.T) {
	var mu sync.Mutex
	calls := map[jsonrpc.ID]bool{}
	cs := connectInMemory(t, newServer(nil), nil, nil, func(tr mcp.Transport) mcp.Transport {
		return &spyTransport{Transport: tr,
			write: func(_ context.Context, msg jsonrpc.Message) {
				if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
					mu.Lock()
					calls[req.ID] = true
					mu.Unlock()
				}
			},
			read: func(msg jsonrpc.Message) {
				mu.Lock()
				defer mu.Unlock()
				if resp, ok := msg.(*jsonrpc.Response); ok && calls[resp.ID] {
					resp.Result = json.RawMessage(`{"content":[{"type":"text","text":"rewritten"}]}`)
				}
			},
		}
	})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); got != "rewritten" {
		t.Errorf("CallTool returned %q, want the result changed in Read", got)
	}
}

// Assumption 3, through CaptureTransport (which also relies on 1 and 2):
// CallTool returns the captured call's error response as an error Captured
// recognizes, on either protocol, and the session goes on.
func TestContractCapturedCall(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // "": negotiated, 2026-07-28
		table := NewTable(0)
		cs := connectInMemory(t, newServer(nil), nil, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(tr mcp.Transport) mcp.Transport {
			return &CaptureTransport{Transport: tr, Table: table}
		})
		for range 2 {
			slot := NewSlot(CapturedCall)
			res, err := cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "echo"})
			table.Forget(slot)
			if !Captured(err) || res != nil {
				t.Fatalf("version %q: CallTool = %+v, %v; want the captured error", version, res, err)
			}
			raw, ok := slot.Result()
			if !ok || !strings.Contains(string(raw), `"text":"echo"`) {
				t.Errorf("version %q: captured %s (%v), want the server's result", version, raw, ok)
			}
		}
	}
	if Captured(errors.New("mcpbridge: result captured beneath the SDK")) || Captured(nil) {
		t.Error("Captured took an error that is not the capture's")
	}
}

// Assumption 4.
func TestContractHTTPPost(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]any{}
	var bad []string
	url := httpServer(t, newServer(nil), true)
	spy := rtFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(req.Body)
			req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(body))
			mu.Lock()
			if msg, err := jsonrpc.DecodeMessage(body); err != nil {
				bad = append(bad, string(body))
			} else if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
				seen[r.Method] = req.Context().Value(markerKey{})
			}
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	cs := connectHTTP(t, url, spy, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	ctx := context.WithValue(context.Background(), markerKey{}, "marker")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, method := range []string{"tools/list", "tools/call"} {
		if seen[method] != "marker" {
			t.Errorf("%s: the POST carried the context value %v, want the caller's", method, seen[method])
		}
	}
	if len(bad) > 0 {
		t.Errorf("POST bodies that are not one JSON-RPC message: %q", bad)
	}
}

// Assumption 5: over a stateful server (older protocol), a session on the
// connection itself opens the standalone GET stream and sends
// Mcp-Protocol-Version on its calls; on a wrapped connection it does
// neither (the session tells the connection the negotiated version through
// an unexported method the wrapper hides).
func TestContractHTTPConnectionNotWrappable(t *testing.T) {
	url := httpServer(t, newServer(nil), false)
	for _, wrapped := range []bool{false, true} {
		t.Run(fmt.Sprintf("wrapped=%v", wrapped), func(t *testing.T) {
			var gets atomic.Int32
			var version atomic.Value
			spy := rtFunc(func(req *http.Request) (*http.Response, error) {
				if req.Method == http.MethodGet {
					gets.Add(1)
				}
				if req.Method == http.MethodPost {
					version.Store(req.Header.Get("Mcp-Protocol-Version"))
				}
				return http.DefaultTransport.RoundTrip(req)
			})
			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: spy}, MaxRetries: -1}
			if wrapped {
				transport = &CaptureTransport{Transport: transport, Table: NewTable(0)}
			}
			cs, err := newClient(nil).Connect(context.Background(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
				t.Fatal(err)
			}
			if !wrapped {
				waitFor(t, "the standalone GET stream", func() bool { return gets.Load() > 0 })
				if v, _ := version.Load().(string); v == "" {
					t.Error("the last POST carried no Mcp-Protocol-Version")
				}
				return
			}
			time.Sleep(200 * time.Millisecond)
			if v, _ := version.Load().(string); gets.Load() > 0 || v != "" {
				t.Errorf("a wrapped connection opened %d GET streams and sent Mcp-Protocol-Version %q: the session no longer needs the unwrapped connection, CaptureTransport could replace CaptureRoundTripper", gets.Load(), v)
			}
		})
	}
}

// Assumption 6, for both kinds of response body, whose Content-Type the
// SDK reads as a media type (in any case).
func TestContractHTTPResponseBodies(t *testing.T) {
	raw := func() string {
		return mcptest.NewRawHTTPServer(t, mcppeer.RawScript{
			Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("echo", "")}}},
			Results: map[string]json.RawMessage{"echo": json.RawMessage(`{"content":[{"type":"video","x":1}]}`)},
		}).URL
	}
	for _, tc := range []struct {
		name, url, wantType string
		setType             string // the Content-Type the responses get instead, if not ""
	}{
		{"application/json (raw server)", raw(), "application/json", ""},
		{"Application/JSON (raw server, the type in another case)", raw(), "Application/JSON", "Application/JSON"},
		{"text/event-stream (go-sdk, stateful)", httpServer(t, newServer(nil), false), "text/event-stream", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var types []string
			base := rtFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err == nil && tc.setType != "" && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					resp.Header.Set("Content-Type", tc.setType)
				}
				if err == nil && req.Method == http.MethodPost && SlotFrom(req.Context()) != nil {
					mu.Lock()
					types = append(types, resp.Header.Get("Content-Type"))
					mu.Unlock()
				}
				return resp, err
			})
			table := NewTable(0)
			cs := connectHTTP(t, tc.url, &CaptureRoundTripper{Base: base, Table: table}, nil)
			slot := NewSlot(CapturedCall)
			_, err := cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "echo"})
			table.Forget(slot)
			if !Captured(err) {
				t.Fatalf("CallTool: %v, want the captured error", err)
			}
			if _, ok := slot.Result(); !ok {
				t.Error("nothing captured")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(types) != 1 || !strings.HasPrefix(types[0], tc.wantType) {
				t.Errorf("response types %q, want one %s", types, tc.wantType)
			}
		})
	}
}

// Assumption 7, newer protocol: the listen stream is a POST with its
// Mcp-Method header, and once it ends the SDK does not open it again.
func TestContractHTTPListenStream(t *testing.T) {
	var listens atomic.Int32
	spy := rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil && req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "subscriptions/listen" {
			listens.Add(1)
			resp.Body.Close() // the stream ends at once
			resp.Body = io.NopCloser(strings.NewReader(""))
		}
		return resp, err
	})
	cs := connectHTTP(t, httpServer(t, newServer(nil), true), spy, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	})
	waitFor(t, "the listen stream", func() bool { return listens.Load() == 1 })
	time.Sleep(3 * time.Second) // longer than the SDK's first reconnect delay (1–2 s)
	if n := listens.Load(); n != 1 {
		t.Errorf("%d listen streams opened, want 1: the SDK re-opens it now, and StreamWatch.ListenEnded need not end the connection", n)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Errorf("a call after the listen stream ended: %v", err)
	}
}

// Assumption 7, newer protocol: the session's own listen stream names no
// resource; each subscribed resource has a listen POST of its own naming
// it alone, whose context Unsubscribe cancels; the session's Close
// cancels its own. StreamWatch tells them apart by their params, and
// takes the end of a cancelled one for the client's doing.
func TestContractHTTPSubscriptionStreams(t *testing.T) {
	type listen struct {
		resources []string
		ctx       context.Context
	}
	var mu sync.Mutex
	var listens []listen
	spy := rtFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPost && req.Header.Get("Mcp-Method") == "subscriptions/listen" {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Params struct {
					Notifications struct {
						ResourceSubscriptions []string `json:"resourceSubscriptions"`
					} `json:"notifications"`
				} `json:"params"`
			}
			if err := json.Unmarshal(body, &msg); err != nil {
				t.Errorf("listen body %s: %v", body, err)
			}
			mu.Lock()
			listens = append(listens, listen{msg.Params.Notifications.ResourceSubscriptions, req.Context()})
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	srv := newServer(&mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	srv.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	cs := connectHTTP(t, httpServer(t, srv, true), spy, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
	})
	got := func() []listen {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(listens)
	}
	waitFor(t, "the session's listen stream", func() bool { return len(got()) == 1 })
	own := got()[0]
	if len(own.resources) != 0 {
		t.Errorf("the session's own listen stream names resources %q", own.resources)
	}
	for _, uri := range []string{"mem://a", "mem://b"} {
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a listen stream per subscription", func() bool { return len(got()) == 3 })
	for i, uri := range []string{"mem://a", "mem://b"} {
		if l := got()[i+1]; !slices.Equal(l.resources, []string{uri}) || l.ctx.Err() != nil {
			t.Errorf("subscription %s: a listen stream naming %q, its context ended: %v", uri, l.resources, l.ctx.Err())
		}
	}
	if err := cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Unsubscribe to cancel its stream's request", func() bool { return got()[1].ctx.Err() != nil })
	if own.ctx.Err() != nil || got()[2].ctx.Err() != nil {
		t.Error("Unsubscribe of one resource cancelled another listen stream")
	}
	cs.Close()
	waitFor(t, "Close to cancel the session's listen stream", func() bool { return own.ctx.Err() != nil })
}

// Assumption 7, older protocols: the standalone stream is a GET that the SDK
// opens again after it ends.
func TestContractHTTPStandaloneGET(t *testing.T) {
	var gets atomic.Int32
	spy := rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && resp.StatusCode/100 == 2 && gets.Add(1) == 1 {
			resp.Body.Close() // the first stream ends at once
			resp.Body = io.NopCloser(strings.NewReader(""))
		}
		return resp, err
	})
	url := httpServer(t, newServer(nil), false)
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: spy}}
	cs, err := newClient(nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
		t.Fatalf("negotiated %s with a stateful server, want an older version", v)
	}
	waitFor(t, "the standalone GET stream to be opened again", func() bool { return gets.Load() >= 2 })
}

// Assumption 8.
func TestContractHTTPTransportError(t *testing.T) {
	var failing atomic.Bool
	spy := rtFunc(func(req *http.Request) (*http.Response, error) {
		if failing.Load() && req.Method == http.MethodPost {
			req.Body.Close()
			return nil, fmt.Errorf("connection refused")
		}
		return http.DefaultTransport.RoundTrip(req)
	})
	cs := connectHTTP(t, httpServer(t, newServer(nil), true), spy, nil)
	failing.Store(true)
	for range MaxTransportFailures + 1 {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err == nil {
			t.Fatal("a call whose POST failed succeeded")
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- cs.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) after transport errors: the SDK now reports a lost connection itself, FailureWatch may go", err)
	case <-time.After(300 * time.Millisecond):
	}
	failing.Store(false)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Errorf("a call after the failures: %v", err)
	}
	cs.Close()
	<-waited
}

// Assumption 9.
func TestContractListToolsCache(t *testing.T) {
	srv := newServer(&mcp.ServerOptions{SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = 60_000 }})
	for _, tc := range []struct {
		version   string
		wantLists int32
	}{
		{"", 1},           // negotiated: 2026-07-28, the second answer comes from the cache
		{"2025-11-25", 2}, // older: always on the wire
	} {
		t.Run("version "+tc.version, func(t *testing.T) {
			var lists atomic.Int32
			cs := connectInMemory(t, srv, nil, &mcp.ClientSessionOptions{ProtocolVersion: tc.version}, func(tr mcp.Transport) mcp.Transport {
				return &spyTransport{Transport: tr, write: func(_ context.Context, msg jsonrpc.Message) {
					if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" {
						lists.Add(1)
					}
				}}
			})
			for range 2 {
				res, err := cs.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tools) != 2 {
					t.Fatalf("%d tools, want 2", len(res.Tools))
				}
			}
			if n := lists.Load(); n != tc.wantLists {
				t.Errorf("%d tools/list requests for two ListTools at %s, want %d", n, cs.InitializeResult().ProtocolVersion, tc.wantLists)
			}
		})
	}
}

// Assumption 10.
func TestContractInvalidHeaderToolDropped(t *testing.T) {
	bad := json.RawMessage(`{"name":"bad","inputSchema":{"type":"object","properties":{"scope":{"type":"object","x-mcp-header":"Scope"}}}}`)
	good := json.RawMessage(`{"name":"good","inputSchema":` + geoSchema + `}`)
	var logged records
	transport := pipeServer(t, mcppeer.RawScript{Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{good, bad, mcppeer.RawTool("plain", "")}}}})
	cs, err := newClient(&mcp.ClientOptions{Logger: slog.New(&logged)}).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "good,plain" {
		t.Errorf("ListTools returned %v, want good and plain", names)
	}
	var found bool
	for _, rec := range logged.all() {
		a := attrs(rec)
		if rec.Message == toolDropMessage && rec.Level == slog.LevelError && a["tool"] == "bad" && strings.Contains(a["error"], "x-mcp-header") {
			found = true
		}
	}
	if !found {
		t.Errorf("no %q record naming the tool and the error; records: %v", toolDropMessage, logged.all())
	}
}

// Assumption 11.
func TestContractParamHeaders(t *testing.T) {
	url := httpServer(t, newServer(nil), true)
	call := &mcp.CallToolParams{Name: "geo", Arguments: map[string]any{"region": "eu-west"}}

	t.Run("tool not listed", func(t *testing.T) {
		cs := connectHTTP(t, url, http.DefaultTransport, nil)
		_, err := cs.CallTool(context.Background(), call)
		if !contains(err, "missing Mcp-Param-Region header") {
			t.Errorf("calling an unlisted tool: %v, want the server's header mismatch", err)
		}
	})
	t.Run("listed through HeaderToolsPage", func(t *testing.T) {
		var sent atomic.Value
		spy := rtFunc(func(req *http.Request) (*http.Response, error) {
			if req.Header.Get("Mcp-Method") == "tools/call" {
				sent.Store(req.Header.Get("Mcp-Param-Region"))
			}
			return http.DefaultTransport.RoundTrip(req)
		})
		table := NewTable(0)
		cs := connectHTTP(t, url, &CaptureRoundTripper{Base: spy, Table: table}, nil)
		slot := NewSlot(HeaderToolsPage)
		res, err := cs.ListTools(WithSlot(context.Background(), slot), nil)
		table.Forget(slot)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.Tools[0].Name != "geo" {
			t.Errorf("the SDK was handed %d tools, want only geo", len(res.Tools))
		}
		if raw, _ := slot.Result(); !strings.Contains(string(raw), `"echo"`) {
			t.Errorf("captured page %s lacks echo", raw)
		}
		res2, err := cs.CallTool(context.Background(), call)
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if got := text(t, res2); got != "region eu-west" {
			t.Errorf("CallTool: %q", got)
		}
		if got := sent.Load(); got != "eu-west" {
			t.Errorf("Mcp-Param-Region: %v", got)
		}
	})
}

// Assumption 13, the client side: batches are accepted whatever the
// negotiated version (the SDK's server-side connection refuses them from
// 2025-06-18 on). LeanConn refuses them there too, on purpose.
func TestContractClientBatches(t *testing.T) {
	for _, version := range []string{"2025-03-26", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer sw.Close()
				br := bufio.NewReader(sr)
				for {
					line, err := br.ReadBytes('\n')
					if err != nil {
						return
					}
					msg, _ := jsonrpc.DecodeMessage(line)
					req, ok := msg.(*jsonrpc.Request)
					if !ok || !req.IsCall() {
						continue
					}
					id, _ := json.Marshal(req.ID.Raw())
					if req.Method == "initialize" {
						fmt.Fprintf(sw, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"0"}}}`+"\n", id, version)
					} else {
						fmt.Fprintf(sw, `[{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}]`+"\n", id)
					}
				}
			}()
			cs, err := newClient(nil).Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			_, err = cs.ListTools(context.Background(), nil)
			cs.Close()
			<-done
			if err != nil {
				t.Errorf("a batched answer at %s: %v; the SDK's client now refuses batches, LeanConn's version check is what it does", version, err)
			}
		})
	}
}

// heldTransport's connection holds the Write of a tools/call of the tool
// held until the write's context ends, then fails it with the context's
// error, writing nothing: a peer that does not read.
type heldTransport struct {
	mcp.Transport
	held string
}

func (t *heldTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &heldConn{Connection: c, held: t.held}, nil
}

type heldConn struct {
	mcp.Connection
	held string
}

func (c *heldConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && bytes.Contains(req.Params, []byte(`"name":"`+c.held+`"`)) {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.Connection.Write(ctx, msg)
}

// Assumption 43: a Write that fails with its context's error, once that
// context ended, fails that call alone: CallTool returns the error and
// the session goes on.
func TestContractWriteEndsWithContext(t *testing.T) {
	cs := connectInMemory(t, newServer(nil), nil, nil, func(tr mcp.Transport) mcp.Transport {
		return &heldTransport{Transport: tr, held: "geo"}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "geo"})
		returned <- err
	}()
	if err := awaitSignal(t, returned, "CallTool whose Write is held"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CallTool whose Write failed with its context: %v, want the context's error", err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"})
	if err != nil {
		t.Fatalf("the next call: %v; a Write failing with its context now ends the session, and so does a call's timeout on a child that does not read (LeanConn.Write)", err)
	}
	if got := text(t, res); got != "echo" {
		t.Errorf("the next call: %q", got)
	}
}
