package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// Changed is told a task's creation, its question, its answer and its
// end, each with its own Version, the later change the greater (two may
// be told in either order: tell runs outside the lock); a creation it
// refuses is no task.
func TestStoreChanged(t *testing.T) {
	var mu sync.Mutex
	var seen []Snapshot
	refuse := false
	s := NewStoreWith(StoreOptions{Max: 4, Extension: true, Changed: func(snap Snapshot) error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return errors.New("the store is down")
		}
		seen = append(seen, snap)
		return nil
	}})
	defer s.Close()
	created, err := s.Start(t.Context(), func(ctx context.Context) (json.RawMessage, error) {
		if _, err := s.Ask(ctx, IDFrom(ctx), "elicitation/create", json.RawMessage(`{}`)); err != nil {
			return nil, err
		}
		return json.RawMessage(`{"content":[]}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var task Task
	json.Unmarshal(created, &task)
	mcptest.Eventually(t, 10*time.Second, func() bool {
		return len(s.Running()) == 1 && strings.Contains(string(mustGet(t, s, task.TaskID)), "inputRequests")
	}, "the task to ask")
	if _, err := s.Answer(t.Context(), "tasks/update", json.RawMessage(`{"taskId":"`+task.TaskID+`","inputResponses":{"q1":{"action":"decline"}}}`)); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 10*time.Second, func() bool { return len(s.Running()) == 0 }, "the task to end")
	mu.Lock()
	sort.Slice(seen, func(i, j int) bool { return seen[i].Version < seen[j].Version })
	var statuses []string
	for i, snap := range seen {
		var w Task
		json.Unmarshal(snap.Wire, &w)
		statuses = append(statuses, w.Status)
		if snap.ID != task.TaskID || i > 0 && snap.Version <= seen[i-1].Version || snap.Ended != (w.Status == Completed) {
			t.Errorf("change %d: %+v", i, snap)
		}
	}
	refuse = true
	mu.Unlock()
	if got := strings.Join(statuses, " "); got != "working input_required working completed" {
		t.Errorf("the changes told: %s", got)
	}
	if _, err := s.Start(t.Context(), func(context.Context) (json.RawMessage, error) { return nil, nil }); err == nil || s.Held() != 1 {
		t.Errorf("a creation Changed refused: %v, %d tasks held, want an error and only the first", err, s.Held())
	}
}

func mustGet(t *testing.T, s *Store, id string) json.RawMessage {
	raw, err := s.Answer(t.Context(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// An end Changed could not take is told again by Retell, until the
// store is told it is Kept elsewhere: then its result is dropped here,
// and the task still counts against Max.
func TestStoreRetellUntilKept(t *testing.T) {
	var mu sync.Mutex
	var ends int
	s := NewStoreWith(StoreOptions{Max: 1, Extension: true, Changed: func(snap Snapshot) error {
		mu.Lock()
		defer mu.Unlock()
		if snap.Ended {
			ends++
			return errors.New("the store is down")
		}
		return nil
	}})
	defer s.Close()
	created, err := s.Start(t.Context(), func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"content":[]}`), nil })
	if err != nil {
		t.Fatal(err)
	}
	var task Task
	json.Unmarshal(created, &task)
	// The body's end is told after it leaves Running: wait for the telling,
	// or the Retell below could come first and be the only one counted.
	mcptest.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ends == 1
	}, "the task's end to be told")
	s.Retell()
	s.Kept(task.TaskID)
	s.Retell()
	mu.Lock()
	defer mu.Unlock()
	if ends != 2 {
		t.Errorf("the end was told %d times, want twice (once as it ended, once retold before Kept)", ends)
	}
	if got := string(mustGet(t, s, task.TaskID)); strings.Contains(got, "content") {
		t.Errorf("a kept task's result is still here: %s", got)
	}
	if _, err := s.Start(t.Context(), func(context.Context) (json.RawMessage, error) { return nil, nil }); err == nil {
		t.Error("a kept task does not count against Max")
	}
}

// Tell tells the state of a task again, newer than its last change, and
// nothing of a task the store does not hold.
func TestStoreTell(t *testing.T) {
	var mu sync.Mutex
	var seen []Snapshot
	s := NewStoreWith(StoreOptions{Max: 4, Extension: true, Changed: func(snap Snapshot) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, snap)
		return nil
	}})
	defer s.Close()
	release := make(chan struct{})
	created, err := s.Start(t.Context(), func(ctx context.Context) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"content":[]}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	var task Task
	json.Unmarshal(created, &task)
	s.Tell(task.TaskID)
	s.Tell("no-such-task")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[1].ID != task.TaskID || seen[1].Version <= seen[0].Version || seen[1].Ended || !strings.Contains(string(seen[1].Wire), `"working"`) {
		t.Errorf("told: %+v", seen)
	}
}
