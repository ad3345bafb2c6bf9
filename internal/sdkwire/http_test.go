package sdkwire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// Transport errors in a row mean the connection is lost, unless the caller
// cancelled the last request; a success resets the count.
func TestFailureWatch(t *testing.T) {
	var fail bool
	var lost []error
	w := &FailureWatch{
		Base: rtFunc(func(*http.Request) (*http.Response, error) {
			if fail {
				return nil, errors.New("connection refused")
			}
			return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
		}),
		Lost: func(err error) { lost = append(lost, err) },
	}
	send := func() error {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", strings.NewReader("{}"))
		_, err := w.RoundTrip(req)
		return err
	}
	fail = true
	for range MaxTransportFailures - 1 {
		send()
	}
	fail = false
	if send() != nil || len(lost) != 0 {
		t.Fatalf("lost = %v", lost)
	}
	fail = true
	for range MaxTransportFailures {
		if send() == nil {
			t.Fatal("no error")
		}
	}
	if len(lost) != 1 || !strings.Contains(lost[0].Error(), "3 HTTP requests in a row failed, the last with: connection refused") {
		t.Errorf("lost = %v", lost)
	}
}

// net/http quotes a server's malformed answer in the request's error
// ("malformed HTTP response \"…\""): the error FailureWatch passes on, and
// the loss it reports, carry that text cut, and wrap the error all the
// same.
func TestFailureWatchCutsServerText(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, strings.Repeat("x", 1<<20)+"\r\n")
			}
			c.Close()
		}
	}()
	var lost error
	w := &FailureWatch{Base: &http.Transport{}, Lost: func(err error) { lost = err }}
	var last error
	for range MaxTransportFailures {
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/mcp", strings.NewReader("{}"))
		_, last = w.RoundTrip(req)
		if !contains(last, "malformed HTTP response") {
			t.Fatalf("the request failed with %.200v, want net/http's malformed response", last)
		}
	}
	if n := len(last.Error()); n > textcut.PeerText {
		t.Errorf("the request's error has %d bytes, want at most %d", n, textcut.PeerText)
	}
	if lost == nil || len(lost.Error()) > 2*textcut.PeerText || !errors.Is(lost, last) {
		t.Errorf("lost: %d bytes (%.200v), want the last error within %d and wrapped", len(lost.Error()), lost, 2*textcut.PeerText)
	}
}

// The end of a listen stream is reported once; the first GET stream is not
// a re-open, the second is.
func TestStreamWatch(t *testing.T) {
	var ended []error
	reopened := 0
	w := &StreamWatch{
		Base: rtFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("data: x\n\n"))}, nil
		}),
		ListenEnded: func(err error) { ended = append(ended, err) },
		Reopened:    func() { reopened++ },
	}
	listen, _ := http.NewRequest(http.MethodPost, "http://x/mcp", http.NoBody)
	listen.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := w.RoundTrip(listen)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Read(make([]byte, 1))
	resp.Body.Close()
	if len(ended) != 1 || !strings.Contains(ended[0].Error(), "subscriptions/listen stream ended (EOF)") {
		t.Errorf("ended = %v", ended)
	}
	// Closed by the reader before its end: not reported.
	resp, _ = w.RoundTrip(listen)
	resp.Body.Close()
	if len(ended) != 1 {
		t.Errorf("a listen stream closed by its reader was reported: %v", ended)
	}
	for want := range 3 {
		get, _ := http.NewRequest(http.MethodGet, "http://x/mcp", http.NoBody)
		if _, err := w.RoundTrip(get); err != nil {
			t.Fatal(err)
		}
		if reopened != want {
			t.Errorf("after %d GETs, %d re-opens", want+1, reopened)
		}
	}
}

// The session's own listen stream (its params name no resource; one it
// cannot read counts as its own) ending is a loss, and a resource
// subscription's the end of that subscription; neither once the client
// cancelled it: a resource subscription's stream ends with Unsubscribe,
// the session's own with the session's Close.
func TestStreamWatchSessionListenOnly(t *testing.T) {
	var ended, subscriptionsEnded []string
	var sent []byte
	w := &StreamWatch{
		Base: rtFunc(func(req *http.Request) (*http.Response, error) {
			sent, _ = io.ReadAll(req.Body)
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("data: x\n\n"))}, nil
		}),
		ListenEnded: func(err error) { ended = append(ended, err.Error()) },
		SubscriptionEnded: func(uris []string) {
			subscriptionsEnded = append(subscriptionsEnded, strings.Join(uris, " "))
		},
	}
	end := func(ctx context.Context, body string) {
		t.Helper()
		listen, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/mcp", strings.NewReader(body))
		listen.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := w.RoundTrip(listen)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	const (
		own      = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`
		resource = `{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["file:///a"]}}}`
	)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name, body string
		ctx        context.Context
		reported   bool
	}{
		{"the session's own", own, context.Background(), true},
		{"a resource subscription's", resource, context.Background(), false},
		{"the session's own, cancelled by the client", own, cancelled, false},
		{"a response, not a request", `{"jsonrpc":"2.0","id":1,"result":{}}`, context.Background(), true},
		{"params of another shape", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":[]}}`, context.Background(), true},
		{"not JSON", `{`, context.Background(), true},
	} {
		ended = nil
		end(c.ctx, c.body)
		if string(sent) != c.body {
			t.Errorf("%s: the server got %q, want %q", c.name, sent, c.body)
		}
		if got := len(ended) == 1; got != c.reported {
			t.Errorf("%s stream ended: reported %v, want %v", c.name, ended, c.reported)
		}
	}
	// A resource subscription's stream the server ended is reported as
	// that subscription's end, once; one the client ended is not.
	if want := []string{"file:///a"}; !slices.Equal(subscriptionsEnded, want) {
		t.Errorf("subscriptions ended %q, want %q", subscriptionsEnded, want)
	}
	subscriptionsEnded = nil
	end(cancelled, resource)
	if subscriptionsEnded != nil {
		t.Errorf("a subscription the client ended was reported: %q", subscriptionsEnded)
	}
}

// A listen request whose body cannot be read fails, as its read says.
func TestStreamWatchBodyError(t *testing.T) {
	w := &StreamWatch{Base: rtFunc(func(*http.Request) (*http.Response, error) {
		t.Error("a request whose body could not be read was sent")
		return nil, errors.New("sent")
	}), ListenEnded: func(error) {}}
	listen, _ := http.NewRequest(http.MethodPost, "http://x/mcp", io.NopCloser(errReader{}))
	listen.Header.Set("Mcp-Method", "subscriptions/listen")
	if _, err := w.RoundTrip(listen); !contains(err, "reading request body: broken pipe") {
		t.Errorf("err = %v", err)
	}
}

// The round trippers fail a request whose body cannot be read, unsent,
// and pass on the errors of the transport beneath them; a body read is
// given again to whoever asks (a redirect, a retry).
func TestRoundTrippersPassErrors(t *testing.T) {
	refused := errors.New("connection refused")
	base := rtFunc(func(req *http.Request) (*http.Response, error) {
		if req.GetBody != nil {
			again, _ := req.GetBody()
			if body, _ := io.ReadAll(again); len(body) == 0 {
				t.Error("GetBody gave an empty body")
			}
		}
		return nil, refused
	})
	capture := &CaptureRoundTripper{Base: base, Table: NewTable(0)}
	ctx := WithSlot(context.Background(), NewSlot(CapturedCall))
	bad, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/mcp", io.NopCloser(errReader{}))
	if _, err := capture.RoundTrip(bad); !contains(err, "reading request body: broken pipe") {
		t.Errorf("capture of an unreadable body: %v", err)
	}
	call, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if _, err := capture.RoundTrip(call); !errors.Is(err, refused) {
		t.Errorf("capture: %v, want the transport's error", err)
	}
	watch := &StreamWatch{Base: base, ListenEnded: func(error) { t.Error("a listen that never opened ended") }}
	listen, _ := http.NewRequest(http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`))
	listen.Header.Set("Mcp-Method", "subscriptions/listen")
	if _, err := watch.RoundTrip(listen); !errors.Is(err, refused) {
		t.Errorf("watch: %v, want the transport's error", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

// Bodies over the limit fail the request instead of being buffered; bodies
// of calls without a slot pass untouched.
func TestCaptureRoundTripperLimit(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	rt := &CaptureRoundTripper{
		Base: rtFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
		}),
		Table:      NewTable(0),
		MaxMessage: 10,
	}
	req, _ := http.NewRequest(http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	if _, err := rt.RoundTrip(req); !contains(err, "the server's JSON response exceeds the frame limit of 10 bytes") {
		t.Errorf("err = %v", err)
	}
	rt.MaxMessage = 0
	req, _ = http.NewRequest(http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, resp.Body); got != body {
		t.Errorf("body %q", got)
	}
}

// A Content-Type the SDK reads as JSON or as an event stream is filtered
// as one, whatever its case or spacing (the SDK parses it as a media
// type): "Application/JSON" passed beneath the filter unbounded, and the
// SDK read it whole, its result neither captured nor kept from its cache.
func TestCaptureRoundTripperContentTypeCase(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`
	for _, ct := range []string{"Application/JSON", "APPLICATION/JSON; charset=utf-8", "application/json ; charset=utf-8", "Text/Event-Stream"} {
		body := result
		if strings.HasPrefix(strings.ToLower(ct), "text/") {
			body = "data: " + result + "\n\n"
		}
		rt := &CaptureRoundTripper{
			Base: rtFunc(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body))}, nil
			}),
			Table:      NewTable(0),
			MaxMessage: 10,
		}
		req, _ := http.NewRequest(http.MethodPost, "http://x/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		resp, err := rt.RoundTrip(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
		}
		if !contains(err, "exceeds the frame limit of 10 bytes") {
			t.Errorf("Content-Type %q: a message over the limit gave %v, want the frame limit's error", ct, err)
		}
	}
}
