package codemode_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/codemode"
)

// holderKey carries, in a test's context, whose program it runs.
type holderKey struct{}

// holderView is a registry's view that tells callers apart by the holder
// their context carries, as a gateway's tells identities apart.
type holderView struct{ codemode.View }

func (holderView) Holder(ctx context.Context) string {
	h, _ := ctx.Value(holderKey{}).(string)
	return h
}

// TestRunOneHolderCannotStarveAnother floods the programs' processes with
// one holder's endless loops: another holder's trivial program starts at
// once and is answered while the flood still runs, and the flood's
// programs that found no place fail by their own time limit, saying the
// places were busy, rather than waiting past it.
func TestRunOneHolderCannotStarveAnother(t *testing.T) {
	f := newFixture(t)
	codemode.SetMaxProcesses(t, 4)
	view := holderView{codemode.RegistryView(f.reg)}
	const flood = 6
	limit := 8 * time.Second
	type ended struct {
		err error
		at  time.Duration
	}
	done := make(chan ended, flood)
	bob := context.WithValue(t.Context(), holderKey{}, "bob")
	start := time.Now()
	for range flood {
		go func() {
			_, err := codemode.Run(bob, view, "while (true) {}", codemode.Options{Timeout: limit})
			done <- ended{err, time.Since(start)}
		}()
	}
	for codemode.RunningProcesses() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the rest of the flood queues up

	alice := context.WithValue(t.Context(), holderKey{}, "alice")
	res, err := codemode.Run(alice, view, "return 1 + 1", codemode.Options{Timeout: limit})
	if err != nil || string(res.Value) != "2" {
		t.Fatalf("alice's program: %v, %v; want 2", res.Value, err)
	}
	if n := len(done); n > 0 {
		t.Errorf("alice's program was answered only after %d of the flood's ended", n)
	}
	busy := 0
	for range flood {
		e := <-done
		if e.at > limit+4*time.Second {
			t.Errorf("a flood program ended %v after it was started, past its limit of %v", e.at, limit)
		}
		switch {
		case errors.Is(e.err, codemode.ErrBusy):
			busy++
			wantError(t, e.err, codemode.ErrBusy, "slots were all busy", "of 4 in use", "2 of them by this caller", "retry")
		case !errors.Is(e.err, codemode.ErrTimeLimit):
			t.Errorf("a flood program: %v, want the time limit or busy slots", e.err)
		}
	}
	// Of the four that queued behind the flood's share of 2, the first two
	// may find a place just before their own limits, as the running two
	// end at theirs (a loaded machine ends those first); the last two
	// cannot, as those places are held past their limits.
	if busy < flood-4 || busy > flood-2 {
		t.Errorf("%d of the flood's programs found no place, want %d to %d (of those queued behind its share of 2)", busy, flood-4, flood-2)
	}
}
