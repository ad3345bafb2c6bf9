package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// mustPublish publishes tools through s or fails the test.
func mustPublish(t *testing.T, s *tool.Source, tools ...tool.Tool) {
	t.Helper()
	if err := s.Publish(tools...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

func TestSourcePublishReplacesItsTools(t *testing.T) {
	r := tool.NewRegistry()
	s := r.NewSource()
	mustPublish(t, s, defs("a", "b")...)
	mustPublish(t, s, defs("b", "c")...)
	if diff := cmp.Diff([]string{"b", "c"}, listNames(r)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if got := s.Len(); got != 2 {
		t.Errorf("Len = %d, want 2", got)
	}
	if diff := cmp.Diff([]string{"b", "c"}, s.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	s.Clear()
	if got := r.Len(); got != 0 {
		t.Errorf("after Clear: registry has %d tools, want 0", got)
	}
	mustPublish(t, s, defs("d")...) // a cleared source publishes again
	s.Close()
	s.Close() // idempotent
	if got := r.Len(); got != 0 {
		t.Errorf("after Close: registry has %d tools, want 0", got)
	}
	if err := s.Publish(defs("e")...); !errors.Is(err, tool.ErrSuperseded) {
		t.Errorf("Publish after Close: err = %v, want ErrSuperseded", err)
	}
}

func TestSourceConflictChangesNothing(t *testing.T) {
	r := tool.NewRegistry()
	other := r.NewSource()
	mustPublish(t, other, defs("taken")...)
	s := r.NewSource()
	mustPublish(t, s, defs("mine")...)
	err := s.Publish(defs("mine2", "taken")...)
	if !errors.Is(err, tool.ErrConflict) {
		t.Fatalf("Publish of a taken name: err = %v, want ErrConflict", err)
	}
	if diff := cmp.Diff([]string{"mine", "taken"}, listNames(r)); diff != "" {
		t.Errorf("List after the refused Publish (-want +got):\n%s", diff)
	}
}

func TestSuccessorTakesOverInOneSwap(t *testing.T) {
	r := tool.NewRegistry()
	old := r.NewSource()
	mustPublish(t, old, defs("same", "gone")...)
	next := old.Successor()
	if next.Registry() != r {
		t.Fatal("a successor publishes into another registry")
	}
	mustPublish(t, old, defs("same", "gone", "late")...) // the old one still works until the takeover
	wake, stop := r.Watch()
	defer stop()
	before := r.Version()

	mustPublish(t, next, defs("same", "new")...) // "same" is not a conflict: it was the predecessor's
	if diff := cmp.Diff([]string{"new", "same"}, listNames(r)); diff != "" {
		t.Errorf("List after the takeover (-want +got):\n%s", diff)
	}
	if got := r.Version() - before; got != 1 {
		t.Errorf("the takeover changed the registry %d times, want once", got)
	}
	if !pending(wake) {
		t.Error("watchers were not told of the takeover")
	}
	if err := old.Publish(defs("same")...); !errors.Is(err, tool.ErrSuperseded) {
		t.Errorf("Publish on the superseded source: err = %v, want ErrSuperseded", err)
	}
	old.Close() // the superseded source's Close leaves the successor's tools
	old.Clear()
	if got := old.Len(); got != 0 {
		t.Errorf("superseded source Len = %d, want 0", got)
	}
	if diff := cmp.Diff([]string{"new", "same"}, listNames(r)); diff != "" {
		t.Errorf("List after closing the superseded source (-want +got):\n%s", diff)
	}
}

func TestSuccessorClosedBeforePublishingLeavesPredecessor(t *testing.T) {
	r := tool.NewRegistry()
	old := r.NewSource()
	mustPublish(t, old, defs("a")...)
	next := old.Successor()
	next.Close()
	mustPublish(t, old, defs("a", "b")...)
	if diff := cmp.Diff([]string{"a", "b"}, listNames(r)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := next.Publish(defs("c")...); !errors.Is(err, tool.ErrSuperseded) {
		t.Errorf("Publish on a closed successor: err = %v, want ErrSuperseded", err)
	}
}

func TestSuccessorOfClosedSourceStartsAfresh(t *testing.T) {
	r := tool.NewRegistry()
	old := r.NewSource()
	mustPublish(t, old, defs("a")...)
	next := old.Successor()
	old.Close()
	mustPublish(t, next, defs("b")...)
	if diff := cmp.Diff([]string{"b"}, listNames(r)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

// TestSuccessionNeverShowsAGap: readers polling the registry while
// generations of a source hand over to each other always see the tool.
func TestSuccessionNeverShowsAGap(t *testing.T) {
	r := tool.NewRegistry()
	src := r.NewSource()
	mustPublish(t, src, defs("stable")...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var missing int
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if !slices.Contains(listNames(r), "stable") {
				missing++
			}
		}
	})
	for range 200 {
		next := src.Successor()
		mustPublish(t, src, defs("stable")...) // the old generation re-syncs meanwhile
		mustPublish(t, next, defs("stable")...)
		src.Close()
		src = next
	}
	close(done)
	wg.Wait()
	if missing != 0 {
		t.Errorf("the tool was missing from %d lists during succession", missing)
	}
}

func TestExecuteCarriesWire(t *testing.T) {
	r := tool.NewRegistry()
	wire := json.RawMessage(`{"content":[{"type":"text","text":"hi","x":1}]}`)
	mustRegister(t, r,
		tool.Tool{Name: "ok", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("hi")}, Wire: wire}, nil
		}},
		tool.Tool{Name: "fails", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{}, &tool.ToolError{Message: "boom", Wire: json.RawMessage(`{"isError":true,"content":[]}`)}
		}},
		tool.Tool{Name: "bad_wire", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Wire: json.RawMessage(`{`)}, nil
		}},
	)
	res, _ := r.Execute(context.Background(), "ok", nil)
	if res.IsError || string(res.Wire) != string(wire) {
		t.Errorf("ok: IsError=%v Wire=%s, want the body's wire result", res.IsError, res.Wire)
	}
	res, _ = r.Execute(context.Background(), "fails", nil)
	if !res.IsError || res.Text() != "Error: boom" || string(res.Wire) != `{"isError":true,"content":[]}` {
		t.Errorf("fails: %+v (wire %s), want the tool error with its wire result", res, res.Wire)
	}
	res, _ = r.Execute(context.Background(), "bad_wire", nil)
	if res.Error == nil || res.Error.Code != tool.CodeInvalidToolOutput || res.Wire != nil {
		t.Errorf("bad_wire: %+v, want CodeInvalidToolOutput and no wire", res)
	}
}

func TestProgressReachesTheListener(t *testing.T) {
	r := tool.NewRegistry()
	mustRegister(t, r, tool.Tool{Name: "slow", Execute: func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		for i := range 3 {
			tool.ReportProgress(ctx, tool.Progress{Progress: float64(i + 1), Total: 3, Message: "step"})
		}
		return tool.Output{}, nil
	}})
	var got []tool.Progress
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
	if _, err := r.Execute(ctx, "slow", nil); err != nil {
		t.Fatal(err)
	}
	want := []tool.Progress{{1, 3, "step"}, {2, 3, "step"}, {3, 3, "step"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	// Without a listener, reporting is a no-op.
	if _, err := r.Execute(context.Background(), "slow", nil); err != nil {
		t.Fatal(err)
	}
	if tool.ProgressFrom(context.Background()) != nil {
		t.Error("ProgressFrom of a bare context is not nil")
	}
}

func TestAnnotationsMustBeJSON(t *testing.T) {
	_, err := tool.NewRegistry().Register(tool.Tool{Name: "a", Annotations: json.RawMessage(`{`), Execute: reply("a")})
	if err == nil {
		t.Fatal("Register accepted annotations that are not JSON")
	}
}

// A tool its source withholds is not listed, and a call of it says why
// (still ErrNotFound, for callers that branch); once the source publishes
// it again, or goes, the call is a plain one or a plain unknown tool.
func TestWithheldToolAnswersWhy(t *testing.T) {
	r := tool.NewRegistry()
	s := r.NewSource()
	why := "changed since pinned: description; accept it with mcpbridge pin s"
	if err := s.PublishOffer(tool.Offer{Tools: defs("kept"), Withheld: map[string]string{"echo": why}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kept"}, listNames(r)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	res, err := r.Execute(context.Background(), "echo", nil)
	want := `tool "echo" is withheld: ` + why
	if we, ok := errors.AsType[*tool.WithheldError](err); !ok || we.Why != why || !errors.Is(err, tool.ErrNotFound) ||
		res.Error == nil || res.Error.Message != want || res.Error.Code != tool.CodeUnknownTool {
		t.Errorf("Execute of a withheld tool = %+v, %v; want %q", res, err, want)
	}
	if got, ok := r.Withheld("echo"); !ok || got != why {
		t.Errorf("Withheld = %q, %v", got, ok)
	}
	mustPublish(t, s, defs("kept", "echo")...)
	if _, ok := r.Withheld("echo"); ok {
		t.Error("still withheld once published")
	}
	if err := s.PublishOffer(tool.Offer{Tools: defs("kept"), Withheld: map[string]string{"echo": why}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := r.Execute(context.Background(), "echo", nil); err == nil || err.Error() != `unknown tool "echo"` {
		t.Errorf("Execute after the source closed: %v", err)
	}
}

// A successor's first Publish racing its predecessor's Clear (a server
// restarted by a reload as the old instance gives up) either takes the
// predecessor's tools over or finds them gone, never still registered
// but no longer the predecessor's: Clear used to let go of its handle
// before it unregistered the tools, and the successor's Publish then
// failed with a conflict, the new instance left with no tools.
func TestSuccessorPublishRacesClear(t *testing.T) {
	r := tool.NewRegistry()
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	for i := range 20000 {
		old := r.NewSource()
		if err := old.Publish(tool.Tool{Name: "t", Execute: noop}); err != nil {
			t.Fatal(err)
		}
		next := old.Successor()
		var wg sync.WaitGroup
		wg.Go(old.Clear)
		err := next.Publish(tool.Tool{Name: "t", Execute: noop})
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: the successor's Publish: %v", i, err)
		}
		next.Close()
	}
}
