package gateway

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bounds of the event store (see eventStore): what a resume needs is
// a dropped stream's last events, within Options.ResumeGrace of its drop.
const (
	// eventStreamsPerSession are the request streams a session keeps: a
	// client that makes more requests than this before resuming a dropped
	// stream cannot resume it.
	eventStreamsPerSession = 64
	// eventsPerStream are the events a stream keeps: a client that misses
	// more of one stream (the standalone GET stream, which gets a
	// list_changed on every reload) cannot resume it.
	eventsPerStream = 64
	// eventBytesPerSession and eventBytesTotal bound the events' data, per
	// session and over all (the go-sdk's memory store's own bound); past
	// them the oldest streams go first.
	eventBytesPerSession = 1 << 20
	eventBytesTotal      = 10 << 20
)

// eventStore keeps the events of the resumable HTTP streams (protocol
// versions before 2026-07-28) for a client that reconnects with
// Last-Event-ID. The go-sdk's MemoryEventStore bounds the events' data
// only: every request stream of a session stays in its tables, events or
// not, until the session ends, so a long-lived session grew by the stream
// of each call (a 2-minute soak of 16 sessions at 400 calls/s held 12 MiB
// of them). This one bounds each session's streams, each stream's events
// and the bytes, dropping the oldest. Safe for concurrent use.
type eventStore struct {
	mu       sync.Mutex
	sessions map[string]*sessionEvents // by session id; guarded by mu
	bytes    int                       // the data of every session; guarded by mu
	opened   uint64                    // streams opened so far, to order them; guarded by mu
}

// sessionEvents are one session's streams.
type sessionEvents struct {
	streams map[string]*streamEvents // by stream id
	order   []*streamEvents          // oldest first
	bytes   int
}

// streamEvents are one stream's kept events: event index first+i is
// data[i].
type streamEvents struct {
	id     string
	opened uint64 // its place in the order streams opened, over all sessions
	first  int
	data   [][]byte
	bytes  int
}

var _ mcp.EventStore = (*eventStore)(nil)

func newEventStore() *eventStore {
	return &eventStore{sessions: make(map[string]*sessionEvents)}
}

// Open implements mcp.EventStore.
func (s *eventStore) Open(_ context.Context, session, stream string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[session]
	if se == nil {
		se = &sessionEvents{streams: make(map[string]*streamEvents)}
		s.sessions[session] = se
	}
	if se.streams[stream] != nil {
		return nil
	}
	s.opened++
	st := &streamEvents{id: stream, opened: s.opened}
	se.streams[stream] = st
	if stream == "" {
		// The standalone GET stream lives as long as its session: it is
		// never dropped whole (its client could open no GET again), only
		// its oldest events are.
		return nil
	}
	se.order = append(se.order, st)
	for len(se.order) > eventStreamsPerSession {
		s.dropOldestLocked(se)
	}
	return nil
}

// dropOldestLocked drops the session's oldest stream. s.mu must be held.
func (s *eventStore) dropOldestLocked(se *sessionEvents) {
	old := se.order[0]
	se.order[0] = nil // what is left of the array keeps no stream
	se.order = se.order[1:]
	delete(se.streams, old.id)
	se.bytes -= old.bytes
	s.bytes -= old.bytes
}

// Append implements mcp.EventStore. Every stream is opened first (the SDK
// and the take do): one not open was dropped, or its session ended,
// and its event is not kept, as it could not be numbered right.
func (s *eventStore) Append(_ context.Context, session, stream string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[session]
	if se == nil || se.streams[stream] == nil {
		return nil
	}
	st := se.streams[stream]
	st.data = append(st.data, data)
	st.bytes += len(data)
	se.bytes += len(data)
	s.bytes += len(data)
	if len(st.data) > eventsPerStream {
		s.dropFirstLocked(se, st)
	}
	// The event just kept stays, over the bounds if it alone is.
	for se.bytes > eventBytesPerSession && len(se.order) > 0 && se.order[0] != st {
		s.dropOldestLocked(se)
	}
	if get := se.streams[""]; get != nil && get != st {
		for se.bytes > eventBytesPerSession && len(get.data) > 0 {
			s.dropFirstLocked(se, get)
		}
	}
	for se.bytes > eventBytesPerSession && len(st.data) > 1 {
		s.dropFirstLocked(se, st)
	}
	for s.bytes > eventBytesTotal {
		if oldest := s.oldestLocked(st); oldest != nil {
			s.dropOldestLocked(oldest)
		} else if !s.dropGetEventLocked(st) {
			break
		}
	}
	return nil
}

// dropGetEventLocked drops the first event of a GET stream other than
// keep, when no request stream is left to drop; false when there is none.
// s.mu must be held.
func (s *eventStore) dropGetEventLocked(keep *streamEvents) bool {
	for _, se := range s.sessions {
		if get := se.streams[""]; get != nil && get != keep && len(get.data) > 0 {
			s.dropFirstLocked(se, get)
			return true
		}
	}
	return false
}

// dropFirstLocked drops the stream's first event. s.mu must be held.
func (s *eventStore) dropFirstLocked(se *sessionEvents, st *streamEvents) {
	n := len(st.data[0])
	st.data[0] = nil
	st.data = st.data[1:]
	st.first++
	st.bytes -= n
	se.bytes -= n
	s.bytes -= n
}

// oldestLocked returns the session whose oldest stream, other than keep,
// opened first of all. s.mu must be held.
func (s *eventStore) oldestLocked(keep *streamEvents) *sessionEvents {
	var oldest *sessionEvents
	for _, se := range s.sessions {
		if len(se.order) == 0 || se.order[0] == keep {
			continue
		}
		if oldest == nil || se.order[0].opened < oldest.order[0].opened {
			oldest = se
		}
	}
	return oldest
}

// After implements mcp.EventStore: an error, as the go-sdk's store
// answers, when events after index were dropped or the stream is gone.
func (s *eventStore) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	events, err := s.after(session, stream, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (s *eventStore) after(session, stream string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[session]
	if se == nil {
		return nil, fmt.Errorf("gateway event store: unknown session %q", session)
	}
	st := se.streams[stream]
	if st == nil {
		return nil, fmt.Errorf("gateway event store: stream %q of session %q: %w (a session keeps its last %d streams)",
			stream, session, mcp.ErrEventsPurged, eventStreamsPerSession)
	}
	start := index + 1 - st.first
	if start < 0 {
		return nil, fmt.Errorf("gateway event store: event %d of stream %q of session %q: %w (a stream keeps its last %d events)",
			index+1, stream, session, mcp.ErrEventsPurged, eventsPerStream)
	}
	if start >= len(st.data) {
		return nil, nil
	}
	// A copy: dropping events nils the slots of st.data.
	return slices.Clone(st.data[start:]), nil
}

// SessionClosed implements mcp.EventStore.
func (s *eventStore) SessionClosed(_ context.Context, session string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se := s.sessions[session]; se != nil {
		s.bytes -= se.bytes
		delete(s.sessions, session)
	}
	return nil
}

// firstKept is the index of the first event kept of stream, 0 when none
// was dropped (or the stream is unknown): a GET without Last-Event-ID
// replays from there, numbered as the events were.
func (s *eventStore) firstKept(session, stream string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se := s.sessions[session]; se != nil {
		if st := se.streams[stream]; st != nil {
			return st.first
		}
	}
	return 0
}
