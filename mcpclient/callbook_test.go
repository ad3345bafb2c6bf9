package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// size counts the calls in b; length and links must agree both ways.
func (b *callBook) size(t *testing.T) int {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	var prev *bookedCall
	for c := b.head; c != nil; c = c.next {
		if c.prev != prev || !c.booked {
			t.Fatalf("call %d: broken links", n)
		}
		prev, n = c, n+1
	}
	if b.tail != prev {
		t.Fatal("tail is not the last call")
	}
	return n
}

func (b *callBook) armedAt() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.armed
}

// bookedCtx books a call of its own context in b.
func bookedCtx(b *callBook) (context.Context, *bookedCall) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return ctx, b.enter(cancel)
}

// slowFixture is the fixture server in memory, with toolCallTimeoutMs
// timeout, inside the caller's synctest bubble.
func slowFixture(t *testing.T, timeout time.Duration) (*harness, *wireRecorder) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	rec := newWireRecorder(srv)
	cfg := stdioConfig("fixture")
	cfg.ToolCallTimeout = timeout
	return mustStart(t, cfg, Options{NewTransport: inMemory(t, srv)}), rec
}

type callEnd struct {
	at  time.Time
	res tool.Result
}

// slowCall calls the fixture's slow tool for ms on a goroutine.
func (h *harness) slowCall(ms int) <-chan callEnd {
	ch := make(chan callEnd, 1)
	go func() {
		res, _ := h.reg.Execute(context.Background(), "mcp__fixture__slow", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms)))
		ch <- callEnd{time.Now(), res}
	}()
	return ch
}

func (h *harness) gen() *generation {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	return h.srv.cur
}

// Each call times out at its own deadline, on the fake clock to the
// nanosecond: the one timer fires for the first call, leaves the second
// running, and re-arms for it.
func TestCallTimesOutAtItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := slowFixture(t, time.Second)
		t0 := time.Now()
		first := h.slowCall(100_000)
		time.Sleep(400 * time.Millisecond)
		second := h.slowCall(100_000)
		a := <-first
		synctest.Wait()
		select {
		case b := <-second:
			t.Fatalf("the second call ended with the first, at %v: %s", b.at.Sub(t0), b.res.Text())
		default:
		}
		b := <-second
		for _, c := range []struct {
			end  callEnd
			want time.Duration
		}{{a, time.Second}, {b, 1400 * time.Millisecond}} {
			if got := c.end.at.Sub(t0); got != c.want {
				t.Errorf("call ended after %v, want %v", got, c.want)
			}
			if want := `Error: server "fixture" did not answer tools/call "slow" within toolCallTimeoutMs (1000ms)`; c.end.res.Text() != want {
				t.Errorf("text = %q, want %q", c.end.res.Text(), want)
			}
			if c.end.res.Error == nil || c.end.res.Error.Code != tool.CodeTimeout {
				t.Errorf("error = %+v, want code %s", c.end.res.Error, tool.CodeTimeout)
			}
		}
		if n := h.gen().calls.size(t); n != 0 {
			t.Errorf("%d calls left in the book", n)
		}
	})
}

// Calls that answer, time out and are cancelled by their callers, all at
// once and in no order, leave nothing in the book, and the timer, once it
// finds no call left, is not set again.
func TestCallBookEmptiesAfterMixedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := slowFixture(t, time.Second)
		const n = 40
		var wg sync.WaitGroup
		var mu sync.Mutex
		outcomes := map[string]int{}
		for i := range n {
			wg.Go(func() {
				start, ms := time.Duration(i%7)*30*time.Millisecond, i*50+25
				if i >= n-5 { // the last to end, well before their deadlines
					start, ms = 1500*time.Millisecond, 0
				}
				time.Sleep(start)
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5+1)*300*time.Millisecond)
				defer cancel()
				res, _ := h.reg.Execute(ctx, "mcp__fixture__slow", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms)))
				outcome := "answered"
				if res.IsError {
					outcome = res.Error.Code
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(outcomes) < 3 {
			t.Errorf("outcomes %v, want answers, timeouts and cancellations", outcomes)
		}
		book := h.gen().calls
		if got := book.size(t); got != 0 {
			t.Fatalf("%d calls left in the book", got)
		}
		time.Sleep(2 * time.Second) // past any deadline the timer may still be set for
		synctest.Wait()
		if at := book.armedAt(); !at.IsZero() {
			t.Errorf("timer set for %v with no call in flight", at)
		}
	})
}

// A call entering with a deadline after the armed one, and a call
// leaving, touch no timer; the fire cancels only the calls due.
func TestCallBookArmsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newCallBook(time.Second)
		t0 := time.Now()
		firstCtx, first := bookedCtx(b)
		timer := b.timer
		time.Sleep(100 * time.Millisecond)
		secondCtx, second := bookedCtx(b)
		thirdCtx, third := bookedCtx(b)
		if b.timer != timer || !b.armedAt().Equal(t0.Add(time.Second)) {
			t.Fatalf("timer changed for a later deadline: armed for %v", b.armedAt().Sub(t0))
		}
		third.leave()
		if !b.armedAt().Equal(t0.Add(time.Second)) || context.Cause(thirdCtx) != errCallDone {
			t.Fatalf("leaving: armed for %v, cause %v", b.armedAt().Sub(t0), context.Cause(thirdCtx))
		}
		time.Sleep(900*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		if firstCtx.Err() != nil {
			t.Fatal("the first call ended before its deadline")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if context.Cause(firstCtx) != errCallTimeout || secondCtx.Err() != nil {
			t.Fatalf("at the first deadline: causes %v, %v", context.Cause(firstCtx), context.Cause(secondCtx))
		}
		if !b.armedAt().Equal(t0.Add(1100 * time.Millisecond)) {
			t.Fatalf("re-armed for %v, want 1.1s", b.armedAt().Sub(t0))
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if context.Cause(secondCtx) != errCallTimeout || b.size(t) != 0 || !b.armedAt().IsZero() {
			t.Fatalf("at the second deadline: cause %v, %d calls, armed %v", context.Cause(secondCtx), b.size(t), b.armedAt())
		}
		first.leave()
		second.leave()
		if context.Cause(firstCtx) != errCallTimeout {
			t.Errorf("leaving after the timeout changed the cause to %v", context.Cause(firstCtx))
		}
	})
}

// A generation ending cancels its calls in flight with its cause before
// end returns, and every call that enters after.
func TestGenerationEndCancelsItsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := slowFixture(t, time.Minute)
		gen := h.gen()
		var calls []context.Context
		for range 3 {
			ctx, booked := h.srv.callContext(context.Background(), gen)
			defer booked.leave()
			calls = append(calls, ctx)
		}
		cause := errors.New("the connection dropped")
		gen.end(cause)
		later, booked := h.srv.callContext(context.Background(), gen)
		defer booked.leave()
		for i, ctx := range append(calls, later) {
			if got := context.Cause(ctx); got != cause {
				t.Errorf("call %d: cause %v, want %v", i, got, cause)
			}
		}
		if n := gen.calls.size(t); n != 0 {
			t.Errorf("%d calls left in the book", n)
		}
		gen.close() // a second cause does not replace the first
		if got := context.Cause(later); got != cause {
			t.Errorf("after close: cause %v", got)
		}
	})
}

// Closing the server ends a call in flight as "closing", whatever the
// SDK's session does after: the call is cancelled with the cause before
// the session closes.
func TestCloseEndsCallInFlight(t *testing.T) {
	h, rec := slowFixture(t, time.Minute)
	done := h.slowCall(100_000)
	<-rec.seen
	h.srv.Close()
	select {
	case end := <-done:
		if want := `Error: server "fixture" is closing`; end.res.Text() != want {
			t.Errorf("text = %q, want %q", end.res.Text(), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end")
	}
}

// A call that ends at the moment the timer fires for it gets one cause,
// its own or the timeout, and leaves the book empty (run with -race).
func TestCallBookLeaveRacesFire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newCallBook(time.Second)
		causes := make(chan error, 200)
		var wg sync.WaitGroup
		for i := range 200 {
			wg.Go(func() {
				time.Sleep(time.Duration(i%4) * time.Millisecond)
				ctx, c := bookedCtx(b)
				time.Sleep(time.Second) // wakes with the fire, in no set order
				c.leave()
				causes <- context.Cause(ctx)
			})
		}
		wg.Wait()
		close(causes)
		for cause := range causes {
			if cause != errCallDone && cause != errCallTimeout {
				t.Errorf("cause %v", cause)
			}
		}
		if n := b.size(t); n != 0 {
			t.Errorf("%d calls left in the book", n)
		}
	})
	// On the real clock, with deadlines passing while calls come and go.
	b := newCallBook(20 * time.Microsecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 300 {
				_, c := bookedCtx(b)
				c.leave()
			}
		})
	}
	wg.Wait()
	if n := b.size(t); n != 0 {
		t.Errorf("%d calls left in the book", n)
	}
}
