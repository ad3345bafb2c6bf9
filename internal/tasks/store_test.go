package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.VerifyTestMain(m)
}

func createdID(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	task, err := Created(raw)
	if err != nil || task == nil {
		t.Fatalf("Created(%s) = %v, %v", raw, task, err)
	}
	return task.TaskID
}

// A peer can only name tasks it was told of: a guessed or replayed id
// (one already fetched) is refused with invalid params, and ids are
// unguessable (128 random bits).
func TestStoreRefusesOtherIDs(t *testing.T) {
	s := NewStore(4)
	defer s.Close()
	raw, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, raw)
	if len(id) != 32 {
		t.Errorf("id %q is not 128 bits of hex", id)
	}
	got, err := s.Answer(context.Background(), "tasks/result", json.RawMessage(`{"taskId":"`+id+`"}`))
	if err != nil || string(got) != `{"action":"decline"}` {
		t.Fatalf("tasks/result = %s, %v", got, err)
	}
	for _, params := range []string{`{"taskId":"` + id + `"}`, `{"taskId":"0"}`, `{"taskId":""}`, `{}`, `[]`} {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			_, err := s.Answer(context.Background(), method, json.RawMessage(params))
			var te *Error
			if !errors.As(err, &te) || te.Code != CodeInvalidParams {
				t.Errorf("%s %s = %v, want invalid params", method, params, err)
			}
		}
	}
}

// The store holds at most max tasks; a cancelled one frees its place,
// its body's context ends, and it reads as cancelled (2025-11-25: the
// task moves to cancelled before the answer). A task in a terminal
// status is not cancelled again (-32602): a completed one keeps its
// result. Cancelling used to forget the task at once, and to answer a
// completed task's cancel by dropping its result.
func TestStoreBoundedAndCancel(t *testing.T) {
	s := NewStore(1)
	defer s.Close()
	ended := make(chan struct{})
	raw, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		<-ctx.Done()
		close(ended)
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, raw)
	if _, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "too many tasks in flight (at most 1)") {
		t.Errorf("second Start: %v", err)
	}
	list, _ := s.Answer(context.Background(), "tasks/list", nil)
	if !strings.Contains(string(list), id) {
		t.Errorf("tasks/list: %s", list)
	}
	got, err := s.Answer(context.Background(), "tasks/cancel", json.RawMessage(`{"taskId":"`+id+`"}`))
	if err != nil || !strings.Contains(string(got), `"status":"cancelled"`) {
		t.Errorf("tasks/cancel = %s, %v", got, err)
	}
	<-ended
	if got, err := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`)); err != nil || !strings.Contains(string(got), `"status":"cancelled"`) {
		t.Errorf("tasks/get of a cancelled task = %s, %v; want it cancelled", got, err)
	}
	raw, err = s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"content":[]}`), nil })
	if err != nil {
		t.Fatalf("Start once the only task was cancelled: %v", err)
	}
	done := createdID(t, raw)
	for {
		got, _ := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+done+`"}`))
		if strings.Contains(string(got), `"status":"completed"`) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, tid := range []string{id, done} {
		_, err := s.Answer(context.Background(), "tasks/cancel", json.RawMessage(`{"taskId":"`+tid+`"}`))
		if te, ok := errors.AsType[*Error](err); !ok || te.Code != CodeInvalidParams || !strings.Contains(te.Message, "is already") {
			t.Errorf("tasks/cancel of a task that ended: %v, want invalid params", err)
		}
	}
	if got, err := s.Answer(context.Background(), "tasks/result", json.RawMessage(`{"taskId":"`+done+`"}`)); err != nil || string(got) != `{"content":[]}` {
		t.Errorf("tasks/result of a completed task after a cancel: %s, %v; want its result", got, err)
	}
}

// Created reads both shapes, and leaves final results alone.
func TestCreated(t *testing.T) {
	for raw, want := range map[string]string{
		`{"task":{"taskId":"a","status":"working","pollInterval":5}}`:              "a working",
		`{"resultType":"task","taskId":"b","status":"working","pollIntervalMs":5}`: "b working",
		`{"resultType":"task","task":{"taskId":"c","status":"input_required"}}`:    "c input_required",
		`{"content":[{"type":"text","text":"\"task\""}]}`:                          "",
		`{"resultType":"complete","task":{"taskId":"d","status":"working"}}`:       "",
	} {
		task, err := Created(json.RawMessage(raw))
		got := ""
		if task != nil {
			got = task.TaskID + " " + task.Status
		}
		if err != nil || got != want {
			t.Errorf("Created(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{`{"task":{"status":"working"}}`, `{"task":{"taskId":"x","status":"paused"}}`, `{"task":7}`} {
		if _, err := Created(json.RawMessage(raw)); err == nil {
			t.Errorf("Created(%s) accepted", raw)
		}
	}
}

// A closed store starts nothing: its tasks' goroutines are all waited for.
func TestStoreClosed(t *testing.T) {
	s := NewStore(2)
	s.Close()
	if _, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return nil, nil }); err == nil {
		t.Error("Start after Close succeeded")
	}
}

// CloseWith tells each running task's body why it is cancelled (a
// gateway that shuts down says so in the task's end).
func TestStoreCloseWithCause(t *testing.T) {
	s := NewStore(2)
	why := errors.New("the gateway is shutting down")
	started, cause := make(chan struct{}), make(chan error, 1)
	if _, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	<-started
	s.CloseWith(why)
	if got := <-cause; got != why {
		t.Errorf("the task's body saw %v, want %v", got, why)
	}
}

// An ended task waits Keep to be collected and is then forgotten (its
// ttl says so), making room for new ones; a running task is not.
func TestStoreKeep(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := NewStoreWith(StoreOptions{Max: 2, Keep: time.Minute, Now: clock})
	defer s.Close()
	ended, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ended), `"ttl":60000`) {
		t.Errorf("created %s, want ttl 60000", ended)
	}
	release := make(chan struct{})
	running, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	id := createdID(t, ended)
	mcptest.Eventually(t, 10*time.Second, func() bool {
		got, _ := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
		return strings.Contains(string(got), `"completed"`)
	}, "the first task ended")
	if _, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return nil, nil }); err == nil {
		t.Fatal("a third task was started in a store of two")
	}
	advance(time.Minute + time.Millisecond)
	if _, err := s.Answer(context.Background(), "tasks/result", json.RawMessage(`{"taskId":"`+id+`"}`)); err == nil {
		t.Error("an expired task's result was still served")
	}
	if _, err := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+createdID(t, running)+`"}`)); err != nil {
		t.Errorf("the running task expired: %v", err)
	}
	third, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{}`), nil })
	if err != nil {
		t.Fatalf("no room after the ended task expired: %v", err)
	}
	createdID(t, third)
}

// A body knows its task's id and can say it waits for input; an ended
// task's status stays.
func TestStoreSetStatus(t *testing.T) {
	s := NewStore(1)
	defer s.Close()
	ids := make(chan string, 1)
	release := make(chan struct{})
	raw, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		ids <- IDFrom(ctx)
		<-release
		return json.RawMessage(`{}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, raw)
	if got := <-ids; got != id {
		t.Fatalf("IDFrom = %q, want %q", got, id)
	}
	s.SetStatus(id, InputRequired, "asking")
	got, _ := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
	if !strings.Contains(string(got), `"status":"input_required"`) || !strings.Contains(string(got), `"statusMessage":"asking"`) {
		t.Errorf("tasks/get = %s", got)
	}
	close(release)
	mcptest.Eventually(t, 10*time.Second, func() bool {
		got, _ := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
		return strings.Contains(string(got), `"completed"`)
	}, "the task ended")
	s.SetStatus(id, Working, "")
	if got, _ := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`)); !strings.Contains(string(got), `"completed"`) {
		t.Errorf("an ended task's status changed: %s", got)
	}
	if IDFrom(context.Background()) != "" {
		t.Error("IDFrom outside a task")
	}
}

// A request asks to run as a task by a member named "task" exactly, as
// the SDK's decoder reads names (by case, after unescaping, the last of
// repeated ones), not null.
func TestIsAugmented(t *testing.T) {
	for _, c := range []struct {
		params string
		want   bool
	}{
		{`{"name":"x","task":{"ttl":1000}}`, true},
		{` {"task":{}} `, true},
		{`{"t\u0061sk":{}}`, true},
		{`{"task":null,"task":{}}`, true},
		{`{"name":"x"}`, false},
		{`{"task":null}`, false},
		{`{"Task":{}}`, false},
		{`{"TASK":{"ttl":1000}}`, false},
		{`{"task":{},"TASK":null}`, true},
		{`{"task":{},"task":null}`, false},
		{`{"arguments":{"task":{}}}`, false},
		{`[]`, false},
		{``, false},
	} {
		if got := IsAugmented(json.RawMessage(c.params)); got != c.want {
			t.Errorf("IsAugmented(%s) = %v, want %v", c.params, got, c.want)
		}
	}
}

// The ttl a request asks its task to be kept for is its "task" member's
// "ttl", read as IsAugmented reads the member; a store keeps the task
// that long once ended, at most its Keep, and says so.
func TestRequestedTTL(t *testing.T) {
	for _, c := range []struct {
		params string
		want   time.Duration
	}{
		{`{"name":"x","task":{"ttl":60000}}`, time.Minute},
		{`{"task":{"ttl":1.5}}`, 1500 * time.Microsecond},
		{`{"task":{"TTL":60000}}`, 0},
		{`{"task":{"ttl":60000},"task":{}}`, 0},
		{`{"Task":{"ttl":60000}}`, 0},
		{`{"task":{"ttl":0}}`, 0},
		{`{"task":{"ttl":-5}}`, 0},
		{`{"task":{"ttl":"60000"}}`, 0},
		{`{"task":true}`, 0},
		{`{"task":{"ttl":1e300}}`, math.MaxInt64},
		{``, 0},
	} {
		if got := RequestedTTL(json.RawMessage(c.params)); got != c.want {
			t.Errorf("RequestedTTL(%s) = %v, want %v", c.params, got, c.want)
		}
	}
	s := NewStoreWith(StoreOptions{Max: 4, Keep: 10 * time.Minute})
	defer s.Close()
	for ttl, want := range map[time.Duration]string{0: `600000`, time.Minute: `60000`, time.Hour: `600000`} {
		raw, err := s.StartTTL(context.Background(), ttl, func(context.Context) (json.RawMessage, error) { return nil, nil })
		var created struct{ Task struct{ TTL json.RawMessage } }
		if err != nil || json.Unmarshal(raw, &created) != nil || string(created.Task.TTL) != want {
			t.Errorf("a task asking for ttl %v: %s %v, want ttl %s", ttl, raw, err, want)
		}
	}
}

// A task's lastUpdatedAt is when its status last changed: polls leave it
// alone, and a cancelled task's body returning later changes nothing.
func TestLastUpdatedAtIsTheLastChange(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func() { mu.Lock(); now = now.Add(time.Second); mu.Unlock() }
	told := make(chan Snapshot, 8)
	s := NewStoreWith(StoreOptions{Max: 2, Keep: time.Minute, Now: clock, Changed: func(snap Snapshot) error { told <- snap; return nil }})
	defer s.Close()
	release := make(chan struct{})
	created, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		<-release
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, created)
	updated := func() string {
		got, err := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
		var task struct{ LastUpdatedAt string }
		if err != nil || json.Unmarshal(got, &task) != nil {
			t.Fatalf("tasks/get: %s %v", got, err)
		}
		return task.LastUpdatedAt
	}
	at := func(sec int64) string { return time.Unix(sec, 0).UTC().Format(time.RFC3339Nano) }
	advance()
	if got := updated(); got != at(1000) {
		t.Errorf("a working task polled a second later: lastUpdatedAt %s, want %s", got, at(1000))
	}
	advance()
	if _, err := s.Answer(context.Background(), "tasks/cancel", json.RawMessage(`{"taskId":"`+id+`"}`)); err != nil {
		t.Fatal(err)
	}
	advance()
	close(release)
	for range 3 { // created, cancelled, its body returned
		<-told
	}
	advance()
	if got := updated(); got != at(1002) {
		t.Errorf("a task cancelled at %s, its body returned at %s: lastUpdatedAt %s", at(1002), at(1003), got)
	}
}
