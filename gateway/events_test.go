package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// counts returns what the store keeps for session: streams, events and
// bytes.
func (s *eventStore) counts(session string) (streams, events, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[session]
	if se == nil {
		return 0, 0, 0
	}
	for _, st := range se.streams {
		events += len(st.data)
	}
	return len(se.streams), events, se.bytes
}

// replay reads the events of stream after index.
func (s *eventStore) replay(session, stream string, index int) ([][]byte, error) {
	var out [][]byte
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// A session that lives on opens a stream per request: it keeps its last
// eventStreamsPerSession of them, and the latest still resumes. The
// go-sdk's memory store kept every stream until the session ended (a
// 2-minute soak of 16 sessions at 400 calls/s: 12 MiB).
func TestEventStoreKeepsASessionsLastStreams(t *testing.T) {
	s := newEventStore()
	ctx := context.Background()
	for i := range 1000 {
		stream := fmt.Sprint("r", i)
		s.Open(ctx, "a", stream)
		s.Append(ctx, "a", stream, nil) // the priming event
		s.Append(ctx, "a", stream, []byte(fmt.Sprintf(`{"id":%d}`, i)))
	}
	if streams, events, _ := s.counts("a"); streams != eventStreamsPerSession || events != 2*eventStreamsPerSession {
		t.Errorf("after 1000 requests the session keeps %d streams, %d events; want %d, %d", streams, events, eventStreamsPerSession, 2*eventStreamsPerSession)
	}
	if got, err := s.replay("a", "r999", 0); err != nil || len(got) != 1 || string(got[0]) != `{"id":999}` {
		t.Errorf("resuming the latest stream after its priming event = %q, %v; want its result", got, err)
	}
	if _, err := s.replay("a", "r0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming a dropped stream: %v; want %v", err, mcp.ErrEventsPurged)
	}
}

// The standalone stream gets a list_changed on every reload: it keeps its
// last eventsPerStream events, and a resume from before them is refused.
func TestEventStoreKeepsAStreamsLastEvents(t *testing.T) {
	s := newEventStore()
	ctx := context.Background()
	s.Open(ctx, "a", "")
	for i := range 1000 {
		s.Append(ctx, "a", "", []byte(fmt.Sprint("changed ", i)))
	}
	if _, events, _ := s.counts("a"); events != eventsPerStream {
		t.Errorf("after 1000 notifications the stream keeps %d events; want %d", events, eventsPerStream)
	}
	if got, err := s.replay("a", "", 998); err != nil || len(got) != 1 || string(got[0]) != "changed 999" {
		t.Errorf("resuming after event 998 = %q, %v; want the last", got, err)
	}
	if _, err := s.replay("a", "", 10); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming after a dropped event: %v; want %v", err, mcp.ErrEventsPurged)
	}
}

// A call still running on a stream dropped meanwhile (its session made
// eventStreamsPerSession requests since) ends with an event that is not
// kept: kept, it would be numbered as the stream's first, and a resume
// would replay the wrong events. Nor is an event kept for a session that
// ended: it would stay for good.
func TestEventStoreKeepsNoEventOfADroppedStream(t *testing.T) {
	s := newEventStore()
	ctx := context.Background()
	s.Open(ctx, "a", "long")
	s.Append(ctx, "a", "long", nil) // priming: event 0
	for i := range eventStreamsPerSession {
		s.Open(ctx, "a", fmt.Sprint("r", i))
	}
	s.Append(ctx, "a", "long", []byte("result")) // event 1, of a stream dropped
	if _, err := s.replay("a", "long", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming the dropped stream after its priming event: %v; want %v", err, mcp.ErrEventsPurged)
	}
	if streams, _, _ := s.counts("a"); streams != eventStreamsPerSession {
		t.Errorf("the session keeps %d streams; want %d", streams, eventStreamsPerSession)
	}
	s.SessionClosed(ctx, "a")
	s.Append(ctx, "a", "r1", []byte("late"))
	s.mu.Lock()
	left := len(s.sessions)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("an event after the session ended left %d sessions", left)
	}
}

// Large results: a session keeps at most eventBytesPerSession of them,
// the newest (even alone over the bound) always; every session together at
// most eventBytesTotal.
func TestEventStoreBoundsBytes(t *testing.T) {
	s := newEventStore()
	ctx := context.Background()
	big := bytes.Repeat([]byte("x"), 100<<10)
	for i := range 30 {
		s.Open(ctx, "a", fmt.Sprint("r", i))
		s.Append(ctx, "a", fmt.Sprint("r", i), big)
	}
	if _, _, n := s.counts("a"); n > eventBytesPerSession {
		t.Errorf("a session keeps %d bytes; want at most %d", n, eventBytesPerSession)
	}
	huge := bytes.Repeat([]byte("y"), 2*eventBytesPerSession)
	s.Open(ctx, "a", "huge")
	s.Append(ctx, "a", "huge", huge)
	if got, err := s.replay("a", "huge", -1); err != nil || len(got) != 1 || len(got[0]) != len(huge) {
		t.Errorf("a result over the bound alone: replayed %d events, %v; want it", len(got), err)
	}
	for i := range 40 {
		session := fmt.Sprint("s", i)
		for j := range 10 {
			s.Open(ctx, session, fmt.Sprint("r", j))
			s.Append(ctx, session, fmt.Sprint("r", j), big)
		}
	}
	s.mu.Lock()
	total := s.bytes
	s.mu.Unlock()
	if total > eventBytesTotal {
		t.Errorf("the sessions keep %d bytes together; want at most %d", total, eventBytesTotal)
	}
	s.SessionClosed(ctx, "s39")
	if streams, _, _ := s.counts("s39"); streams != 0 {
		t.Errorf("a closed session keeps %d streams", streams)
	}
}

// Through the gateway: a 2025-11-25 session over HTTP (resumable
// streams) that makes many calls keeps a bounded number of streams.
func TestLongSessionKeepsBoundedEvents(t *testing.T) {
	reg, newView := quickRegistry(t)
	opts := Options{NewView: newView}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	c := &client{}
	cs, err := newSDKClient(c).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.session = cs
	c.names(t)
	const calls = 3 * eventStreamsPerSession
	for range calls {
		c.call(t, "quick", `{}`)
	}
	store, ok := g.events.(*eventStore)
	if !ok {
		t.Fatalf("the gateway's event store is a %T, which keeps every stream of a session", g.events)
	}
	streams, events, n := store.counts(cs.ID())
	if streams == 0 || streams > eventStreamsPerSession || events > eventStreamsPerSession*eventsPerStream || n > eventBytesPerSession {
		t.Errorf("after %d calls the session keeps %d streams, %d events, %d bytes; want 1 to %d streams", calls, streams, events, n, eventStreamsPerSession)
	}
	cs.Close()
	waitFor(t, "the closed session's events to go", func() bool {
		streams, _, _ := store.counts(cs.ID())
		return streams == 0
	})
}

// A call's stream is kept in the event store only once its response is
// an SSE stream, whose event ids a client could resume from: a stream
// answered as one JSON body keeps nothing; a primed one keeps its
// priming event and what follows, numbered as the client was sent them.
func TestStreamKeptOnceItStreams(t *testing.T) {
	store := newEventStore()
	c := newWireConn("s", store, new(sync.Map))
	answer := func(id int64, prime bool) (*wireStream, *httptest.ResponseRecorder) {
		t.Helper()
		rid, _ := jsonrpc.MakeID(float64(id))
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		w := httptest.NewRecorder()
		s, _, ok := c.openStream(w, r, wirePOST{calls: idSet{one: rid}, version: "2025-11-25"})
		if !ok {
			t.Fatal("stream not opened")
		}
		if prime {
			s.prime(time.Now().Add(primeFlush))
		}
		if err := c.Write(context.Background(), &jsonrpc.Response{ID: rid, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		return s, w
	}
	_, w := answer(1, false)
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("an unprimed call was answered as %q, want one JSON body", ct)
	}
	if streams, _, _ := store.counts("s"); streams != 1 {
		t.Fatalf("after a call answered as one JSON body the session keeps %d streams, want the GET stream's alone", streams)
	}
	s, w := answer(2, true)
	if !strings.Contains(w.Body.String(), "id: "+s.id+"_0\n") || !strings.Contains(w.Body.String(), "id: "+s.id+"_1\n") {
		t.Fatalf("a primed call's stream is %q, want events %s_0 and _1", w.Body.String(), s.id)
	}
	replay, err := store.replay("s", s.id, 0)
	if err != nil || len(replay) != 1 || string(replay[0]) != string(mustEncode(t, 2)) {
		t.Fatalf("resuming after the priming event replays %q (%v), want the response alone", replay, err)
	}
}

// mustEncode is the response of id with an empty result, as the wire has it.
func mustEncode(t *testing.T, id int64) []byte {
	t.Helper()
	rid, _ := jsonrpc.MakeID(float64(id))
	data, err := sdkwire.EncodeMessage(&jsonrpc.Response{ID: rid, Result: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A POST's stream is numbered within its session, skipping an id that a
// replay claims: a client that names the next number in a Last-Event-ID
// must not have its replay, which ends by dropping its claim, take the
// new stream's place, and with it the new call's answer.
func TestStreamIDSkipsAClaim(t *testing.T) {
	c := newWireConn("s", newEventStore(), new(sync.Map))
	open := func(id int64) *wireStream {
		t.Helper()
		rid, _ := jsonrpc.MakeID(float64(id))
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		s, _, ok := c.openStream(httptest.NewRecorder(), r, wirePOST{calls: idSet{one: rid}})
		if !ok {
			t.Fatal("stream not opened")
		}
		return s
	}
	first := open(1)
	next := strconv.FormatUint(c.lastStream+1, 36)
	claim := &wireStream{id: next} // as acquire claims a stream it replays
	c.mu.Lock()
	c.streams[next] = claim
	c.mu.Unlock()
	second := open(2)
	c.mu.Lock()
	defer c.mu.Unlock()
	if second.id == next || second.id == first.id || c.streams[next] != claim || c.streams[second.id] != second {
		t.Errorf("streams %q, then %q with %q claimed; want a new id, the claim left as it was", first.id, second.id, next)
	}
}

// The standalone GET stream is never dropped whole, whatever the request
// streams and the bytes do: more request streams than a session keeps,
// one large result, or another session's larger one trim its oldest
// events at most; and a GET without Last-Event-ID replays what is kept
// rather than failing on what is not. A dropped GET stream used to make
// every later GET of its session fail (400 "failed to replay events"),
// and another identity's large result could drop it.
func TestGetStreamOutlivesTheBounds(t *testing.T) {
	ctx := context.Background()
	store := newEventStore()
	for _, session := range []string{"a", "b"} {
		if err := store.Open(ctx, session, ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := range eventsPerStream + 5 {
		store.Append(ctx, "a", "", []byte("list_changed "+strconv.Itoa(i)))
	}
	for i := range eventStreamsPerSession + 5 {
		stream := "call" + strconv.Itoa(i)
		store.Open(ctx, "a", stream)
		store.Append(ctx, "a", stream, []byte("small"))
	}
	store.Open(ctx, "a", "big")
	store.Append(ctx, "a", "big", make([]byte, eventBytesPerSession+1))
	store.Open(ctx, "b", "huge")
	store.Append(ctx, "b", "huge", make([]byte, eventBytesTotal))
	first := store.firstKept("a", "")
	got, err := store.replay("a", "", first-1)
	if err != nil || first == 0 {
		t.Fatalf("a GET without Last-Event-ID, from the first kept event (%d): %v, want what is kept", first, err)
	}
	if len(got) > eventsPerStream {
		t.Errorf("the GET stream keeps %d events, want at most %d", len(got), eventsPerStream)
	}
	if _, err := store.replay("a", "", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming after a dropped event: %v, want ErrEventsPurged", err)
	}
	store.mu.Lock()
	total := store.bytes
	store.mu.Unlock()
	if total > eventBytesTotal+eventBytesPerSession {
		t.Errorf("the store holds %d bytes, over its bounds", total)
	}
}

// A GET without Last-Event-ID after the GET stream's oldest events were
// dropped replays what is kept, each under the id it was numbered with
// (a resume from the last one then sends nothing twice). It used to fail
// (400), then, once it replayed, to number them from 0.
func TestGetReplayKeepsItsNumbers(t *testing.T) {
	store := newEventStore()
	c := newWireConn("s", store, new(sync.Map))
	for i := range eventsPerStream + 6 {
		store.Append(context.Background(), "s", "", []byte(`{"n":`+strconv.Itoa(i)+`}`))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client reads what is replayed, then leaves
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
	w := httptest.NewRecorder()
	c.serveGET(w, r)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "id: _6\ndata: {\"n\":6}") || strings.Contains(body, "id: _0\n") {
		t.Fatalf("a GET without Last-Event-ID: %d\n%.400s", w.Code, body)
	}
	if !strings.Contains(body, "id: _69\ndata: {\"n\":69}") {
		t.Errorf("the last event is not numbered 69:\n%s", body[max(0, len(body)-300):])
	}
}
