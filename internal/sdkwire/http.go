package sdkwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The round trippers of a Streamable HTTP connection (assumptions 4–8 of
// the package doc). Each has one job; chain them through their Base fields
// and put the chain in the HTTPClient of mcp.StreamableClientTransport.

// CaptureRoundTripper captures raw results at the HTTP level, where the
// message-level CaptureTransport cannot be used (assumption 5). It records
// a POSTed call whose request context carries a Slot (assumption 4: the
// SDK POSTs a request with its call's context, one JSON-RPC message per
// body), and filters the JSON bodies and server-sent events of the
// responses through the Table (assumption 6).
type CaptureRoundTripper struct {
	Base  http.RoundTripper
	Table *Table
	// MaxMessage bounds one JSON body or server-sent event held for
	// capture, in bytes, so a hostile server cannot make the bridge buffer
	// without end; 0 means no bound.
	MaxMessage int
}

// RoundTrip sends req through Base, capturing as described above.
func (rt *CaptureRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent jsonrpc.Message
	if req.Method == http.MethodPost && req.Body != nil && SlotFrom(req.Context()) != nil {
		var err error
		if req, sent, err = rt.record(req); err != nil {
			return nil, err
		}
	}
	resp, err := rt.Base.RoundTrip(req)
	if sent != nil {
		rt.Table.Written(sent)
	}
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch mt := mediaType(resp.Header.Get("Content-Type")); {
	case mt == "text/event-stream":
		var call *Slot // a POST's stream carries what its call causes
		if req.Method == http.MethodPost {
			call = SlotFrom(req.Context())
		}
		resp.Body = newSSEFilter(resp.Body, rt.Table, rt.MaxMessage, call)
	case mt == "application/json" && req.Method == http.MethodPost:
		return rt.filterJSON(resp)
	}
	return resp, nil
}

// mediaType is the media type of a Content-Type as the SDK reads it
// (assumption 6): parsed, in lower case, "" when it does not parse.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}

// record reads the body of req, a POST, records the call it carries, and
// returns a copy of req with the body restored.
func (rt *CaptureRoundTripper) record(req *http.Request) (*http.Request, jsonrpc.Message, error) {
	req, body, err := readBody(req)
	if err != nil {
		return nil, nil, err
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return req, nil, nil
	}
	if changed, err := sentRewritten(req.Context(), msg); err != nil {
		return nil, nil, err
	} else if changed {
		if body, err = jsonrpc.EncodeMessage(msg); err != nil {
			return nil, nil, fmt.Errorf("encoding a rewritten request: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		rewriteHeaders(req.Header, msg.(*jsonrpc.Request).Method)
	}
	rt.Table.Sent(req.Context(), msg)
	return req, msg, nil
}

// readBody reads the body of req and returns a copy of req with the body
// restored, and the body.
func readBody(req *http.Request) (*http.Request, []byte, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading request body: %w", err)
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, body, nil
}

// filterJSON filters the one JSON-RPC message of an application/json body.
func (rt *CaptureRoundTripper) filterJSON(resp *http.Response) (*http.Response, error) {
	r := io.Reader(resp.Body)
	if rt.MaxMessage > 0 {
		r = io.LimitReader(r, int64(rt.MaxMessage)+1)
	}
	body, err := io.ReadAll(r)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading response body: %w", err)
	}
	if rt.MaxMessage > 0 && len(body) > rt.MaxMessage {
		return nil, fmt.Errorf("the server's JSON response exceeds the frame limit of %d bytes", rt.MaxMessage)
	}
	body, _ = filterMessage(rt.Table, body, nil)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// filterMessage applies the table to one JSON-RPC message, returning the
// bytes to hand to the SDK, or consumed when the SDK is not to see it
// (Table.Consume). call is the slot of the call whose response stream
// data came on, if any (Table.OnRelatedRequest).
func filterMessage(t *Table, data []byte, call *Slot) (out []byte, consumed bool) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return data, false
	}
	t.relate(msg, call)
	if !t.Received(msg) {
		return data, t.consumed(msg)
	}
	if out, err = jsonrpc.EncodeMessage(msg); err != nil {
		return data, false
	}
	return out, false
}

// MaxTransportFailures is how many HTTP requests failing in a row at the
// transport level FailureWatch takes for a lost connection.
const MaxTransportFailures = 3

// FailureWatch reports a lost connection the SDK does not report: a POST
// that fails at the transport level fails only its own call, and a session
// of the newer protocol never ends on its own (assumption 8). Lost is
// called (possibly more than once) when MaxTransportFailures requests in a
// row failed, the last of them not cancelled by its caller. The errors it
// passes on, to Lost and to the SDK, have their text cut to textcut.PeerText
// (net/http quotes a malformed answer whole).
type FailureWatch struct {
	Base http.RoundTripper
	Lost func(error)

	failures atomic.Int32 // consecutive transport errors
}

// RoundTrip sends req through Base, counting transport errors.
func (w *FailureWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.Base.RoundTrip(req)
	if err != nil {
		err = cutError(err)
		if w.failures.Add(1) >= MaxTransportFailures && req.Context().Err() == nil {
			w.Lost(fmt.Errorf("%d HTTP requests in a row failed, the last with: %w", MaxTransportFailures, err))
		}
		return resp, err
	}
	w.failures.Store(0)
	return resp, nil
}

// StreamWatch watches the long-lived streams of a session for what the SDK
// does not act on (assumption 7):
//   - ListenEnded is called once when the body of the session's own
//     subscriptions/listen POST (newer protocol; the one for list changes)
//     ends, unless the client cancelled it: the SDK never opens it again,
//     so list_changed would silently stop. The stream of one resource
//     subscription is not watched: Unsubscribe ends it, and its end says
//     nothing of the session;
//   - SubscriptionEnded is called once when the stream of a resource
//     subscription (its URIs) ends, unless the client cancelled it
//     (Unsubscribe, the session's Close): the server ended it, and the
//     SDK, which still counts the URI subscribed, neither opens it again
//     nor says so;
//   - Reopened is called each time a standalone GET stream (older
//     protocols) is opened after the first: notifications may have been
//     missed in between.
//
// Any may be nil.
type StreamWatch struct {
	Base              http.RoundTripper
	ListenEnded       func(error)
	SubscriptionEnded func(uris []string)
	Reopened          func()

	gets atomic.Int32 // standalone GET streams opened
}

// RoundTrip sends req through Base and watches its response.
func (w *StreamWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	var ended func(error)
	if (w.ListenEnded != nil || w.SubscriptionEnded != nil) && req.Header.Get("Mcp-Method") == "subscriptions/listen" && req.Body != nil {
		var body []byte
		var err error
		if req, body, err = readBody(req); err != nil {
			return nil, err
		}
		ended = w.onEnd(listenedURIs(body))
	}
	resp, err := w.Base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if req.Method == http.MethodGet && resp.StatusCode/100 == 2 && w.gets.Add(1) > 1 && w.Reopened != nil {
		w.Reopened()
	}
	if ended != nil && resp.Body != nil {
		ctx := req.Context()
		resp.Body = &endWatcher{ReadCloser: resp.Body, ended: func(err error) {
			if ctx.Err() == nil { // not ended by the client
				ended(err)
			}
		}}
	}
	return resp, nil
}

// onEnd is what the end of a listen stream for uris (none: the session's
// own) calls, nil for nothing.
func (w *StreamWatch) onEnd(uris []string) func(error) {
	switch {
	case len(uris) > 0 && w.SubscriptionEnded != nil:
		return func(error) { w.SubscriptionEnded(uris) }
	case len(uris) == 0 && w.ListenEnded != nil:
		return func(err error) {
			w.ListenEnded(fmt.Errorf("the subscriptions/listen stream ended (%v); notifications would be lost", err))
		}
	}
	return nil
}

// listenedURIs returns the resources body, a subscriptions/listen
// request, subscribes to: none for the session's own listen stream
// (assumption 7). A body it cannot read counts as the session's own: its
// end is then taken for a loss.
func listenedURIs(body []byte) []string {
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return nil
	}
	var params struct {
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if json.Unmarshal(req.Params, &params) != nil {
		return nil
	}
	return params.Notifications.ResourceSubscriptions
}

// endWatcher reports the end of a response body that should stay open,
// once, unless the reader closed it first.
type endWatcher struct {
	io.ReadCloser
	once  sync.Once
	ended func(error)
}

func (w *endWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if err != nil {
		w.once.Do(func() { w.ended(err) })
	}
	return n, err
}

func (w *endWatcher) Close() error {
	w.once.Do(func() {})
	return w.ReadCloser.Close()
}
