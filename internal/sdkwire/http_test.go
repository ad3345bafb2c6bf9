package sdkwire

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
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
