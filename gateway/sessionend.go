package gateway

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// clientSession is the tool.Session of a client's calls: a source that
// keeps state per session (mcpclient's share: session) keys it by this
// value and lets it go when Done closes.
type clientSession struct {
	g       *Gateway
	session *mcp.ServerSession
}

var _ tool.Session = clientSession{}

// Done returns a channel closed when the session ends. The watch starts
// with the first call to Done for the session: most calls never ask.
func (c clientSession) Done() <-chan struct{} { return c.g.ends.of(c.session) }

// requestSession is the tool.Session of a call that has no session but
// its POST (the stateless HTTP fast path): it ends when the call's
// response went out, as the one-request session the SDK's path makes for
// a stateless POST ends with the POST.
type requestSession struct{ out *fastStream }

var _ tool.Session = requestSession{}

// Done returns a channel closed once the call's response was written.
func (r requestSession) Done() <-chan struct{} { return r.out.done }

// sessionEnds are the channels closed when sessions end. The zero value
// is ready to use.
type sessionEnds struct {
	mu   sync.Mutex
	byID map[*mcp.ServerSession]chan struct{} // guarded by mu
	// ended, when set, runs once a watched session has ended, before its
	// channel closes.
	ended func(*mcp.ServerSession)
}

// of returns session's channel, watching it on first use: a goroutine
// waits for the session to end, runs ended, closes the channel and
// forgets it.
func (e *sessionEnds) of(session *mcp.ServerSession) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.byID[session]; ok {
		return ch
	}
	if e.byID == nil {
		e.byID = make(map[*mcp.ServerSession]chan struct{})
	}
	ch := make(chan struct{})
	e.byID[session] = ch
	go func() {
		_ = session.Wait()
		if e.ended != nil {
			e.ended(session)
		}
		e.mu.Lock()
		delete(e.byID, session)
		e.mu.Unlock()
		close(ch)
	}()
	return ch
}
