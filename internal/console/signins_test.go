package console

import (
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// A viewer who signs in again and again drops only their own oldest
// sign-ins: the others' stay signed in, however many times eve signs in.
func TestSigninsOfOneViewerBounded(t *testing.T) {
	clock := time.Unix(0, 0)
	s := newSignins(func() time.Time { clock = clock.Add(time.Second); return clock })
	alice := s.add(gatewayauth.Viewer{Name: "alice", View: true}, "a")
	var eves []string
	for range 2 * maxSignins {
		eves = append(eves, s.add(gatewayauth.Viewer{Name: "eve", View: true}, "e"))
	}
	if s.get(alice) == nil {
		t.Error("alice was signed out by eve's sign-ins")
	}
	if s.get(eves[len(eves)-1]) == nil || s.get(eves[0]) != nil {
		t.Error("eve's newest sign-in is not kept, or her oldest is")
	}
	if n := s.countLocked("eve"); n != maxViewerSignins {
		t.Errorf("eve holds %d sign-ins, want %d", n, maxViewerSignins)
	}
}
