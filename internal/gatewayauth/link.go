package gatewayauth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/gateway"
)

// A call's tool may make calls for its caller (code mode's run_code runs
// a program; gateway.Call.Parent). The audit ties them together: each of
// them records, as parent, an id that the call that made them records
// as call. The id is made when the first of them is entered, so the
// lines of other calls are unchanged.

// linkKey is the context key of a call's link.
type linkKey struct{}

// link is the audit id of one admitted call, made on first use.
type link struct{ id atomic.Pointer[string] }

// withLink returns ctx carrying a new link for the call it is the
// context of.
func withLink(ctx context.Context) (context.Context, *link) {
	l := &link{}
	return context.WithValue(ctx, linkKey{}, l), l
}

// get returns the link's id, making it on first use.
func (l *link) get() string {
	if id := l.id.Load(); id != nil {
		return *id
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	id := hex.EncodeToString(b[:])
	if !l.id.CompareAndSwap(nil, &id) {
		return *l.id.Load()
	}
	return id
}

// made returns the link's id when a call made for its caller used it, ""
// otherwise.
func (l *link) made() string {
	if id := l.id.Load(); id != nil {
		return *id
	}
	return ""
}

// parentID is the audit id of the call that made c, "" for a client's
// call. ctx, c's context, derives from the one Enter returned for
// c.Parent.
func parentID(ctx context.Context, c gateway.Call) string {
	if c.Parent == nil {
		return ""
	}
	if l, ok := ctx.Value(linkKey{}).(*link); ok {
		return l.get()
	}
	return "" // untested: the parent passed a Keeper's Enter
}
