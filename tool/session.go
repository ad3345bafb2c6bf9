package tool

import "context"

// Session is the consumer's session a call belongs to, such as a gateway
// client's, for sources that keep state per session (an MCP server whose
// entry says share: session runs one instance per session). Values of one
// session compare equal; Done is closed when the session ends.
type Session interface {
	Done() <-chan struct{}
}

type sessionKey struct{}

// WithSession returns a context whose tool calls belong to s.
func WithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the Session of ctx, or nil.
func SessionFrom(ctx context.Context) Session {
	s, _ := ctx.Value(sessionKey{}).(Session)
	return s
}
