package tasks

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// storeSender sends a client's requests to a store, as a server holding
// it would answer them.
type storeSender struct{ s *Store }

func (ss storeSender) Send(ctx context.Context, method string, params map[string]json.RawMessage) (json.RawMessage, error) {
	raw, _ := json.Marshal(params)
	return ss.s.Answer(ctx, method, raw)
}

// An extension store's task, followed by this package's own client side
// (Await): created as "resultType":"task", its question reaches the
// client as an inputRequest, the answer comes back through tasks/update
// to the body, and the result arrives inline in tasks/get.
func TestExtensionStoreRoundTrip(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 2, Keep: time.Minute, Extension: true})
	defer s.Close()
	raw, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		answer, err := s.Ask(ctx, IDFrom(ctx), "elicitation/create", json.RawMessage(`{"message":"which one?"}`))
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": "got " + string(answer)}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !IsExtensionTask(raw) || !strings.Contains(string(raw), `"ttlMs":60000`) {
		t.Fatalf("created %s", raw)
	}
	task, err := Created(raw)
	if err != nil || task == nil {
		t.Fatalf("Created(%s) = %v, %v", raw, task, err)
	}
	var asked []string
	res, err := Await(context.Background(), storeSender{s}, *task, Options{
		Answer: func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			asked = append(asked, method+" "+string(params))
			return json.RawMessage(`{"action":"accept","content":{"pick":"snake"}}`), nil
		},
		After: func(time.Duration) <-chan time.Time { return time.After(time.Millisecond) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != `elicitation/create {"message":"which one?"}` {
		t.Errorf("asked %q", asked)
	}
	if !strings.Contains(string(res), `got {\"action\":\"accept\",\"content\":{\"pick\":\"snake\"}}`) {
		t.Errorf("result %s", res)
	}
}

// A failed extension task carries its error inline; an answer to no
// waiting question, or to another store's task, changes nothing.
func TestExtensionStoreFailedAndStrayAnswers(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 1, Extension: true})
	defer s.Close()
	raw, err := s.Start(context.Background(), func(context.Context) (json.RawMessage, error) {
		return nil, &Error{CodeInvalidParams, "unknown tool \"x\""}
	})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := Created(raw)
	if _, err := Await(context.Background(), storeSender{s}, *task, Options{After: func(time.Duration) <-chan time.Time { return time.After(time.Millisecond) }}); err == nil ||
		!strings.Contains(err.Error(), `MCP error -32602: unknown tool "x"`) {
		t.Errorf("Await = %v", err)
	}
	if got, err := s.Answer(context.Background(), "tasks/update", json.RawMessage(`{"taskId":"`+task.TaskID+`","inputResponses":{"q9":{}}}`)); err != nil || string(got) != `{}` {
		t.Errorf("a stray answer: %s, %v", got, err)
	}
	if _, err := NewStore(1).Answer(context.Background(), "tasks/update", json.RawMessage(`{"taskId":"`+task.TaskID+`"}`)); err == nil {
		t.Error("another store took the answer")
	}
	if _, err := s.Ask(context.Background(), "", "elicitation/create", nil); err == nil {
		t.Error("asked outside a task")
	}
}

// The extension's tasks/cancel answers the bare ack; a running task then
// reads cancelled, an ended one keeps its end (idempotent); either way it
// frees its place among Max, and the dismissed tasks kept are bounded by
// Max too.
func TestExtensionStoreCancel(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 1, Keep: time.Minute, Extension: true})
	defer s.Close()
	start := func(fn func(context.Context) (json.RawMessage, error)) string {
		t.Helper()
		raw, err := s.Start(context.Background(), fn)
		if err != nil {
			t.Fatal(err)
		}
		task, _ := Created(raw)
		return task.TaskID
	}
	answer := func(method, id string) string {
		t.Helper()
		got, err := s.Answer(context.Background(), method, json.RawMessage(`{"taskId":"`+id+`"}`))
		if err != nil {
			t.Fatalf("%s %s: %v", method, id, err)
		}
		return string(got)
	}
	blocked := start(func(ctx context.Context) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	for range 2 {
		if got := answer("tasks/cancel", blocked); got != `{}` {
			t.Errorf("tasks/cancel = %s, want the bare ack", got)
		}
	}
	if got := answer("tasks/get", blocked); !strings.Contains(got, `"status":"cancelled"`) {
		t.Errorf("tasks/get after tasks/cancel = %s", got)
	}
	done := start(func(context.Context) (json.RawMessage, error) { return json.RawMessage(`{"content":[]}`), nil })
	for !strings.Contains(answer("tasks/get", done), `"status":"completed"`) {
		time.Sleep(time.Millisecond)
	}
	answer("tasks/cancel", done)
	if got := answer("tasks/get", done); !strings.Contains(got, `"status":"completed"`) || !strings.Contains(got, `"result":{"content":[]}`) {
		t.Errorf("a completed task cancelled reads %s", got)
	}
	if s.Held() != 0 || s.Holds(blocked) {
		t.Errorf("held %d (the first dismissed kept: %v); want the oldest dismissed forgotten past Max", s.Held(), s.Holds(blocked))
	}
}

// A round asked at once shows every question under its own key (one a
// waiting question holds gets the store's own), each leaves as the peer
// answers it, and the round returns every answer under its key.
func TestExtensionStoreAskRound(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 1, Extension: true})
	defer s.Close()
	elicit := json.RawMessage(`{"method":"elicitation/create","params":{"message":"sure?"}}`)
	raw, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		go s.Ask(ctx, IDFrom(ctx), "elicitation/create", json.RawMessage(`{}`)) // holds q1 until answered
		for len(s.pending(t, IDFrom(ctx)).InputRequests) == 0 {
			time.Sleep(time.Millisecond)
		}
		answers, err := s.AskRound(ctx, IDFrom(ctx), map[string]json.RawMessage{"first": elicit, "q1": elicit})
		if err != nil {
			return nil, err
		}
		return json.Marshal(answers)
	})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := Created(raw)
	id := task.TaskID
	waitKeys := func(want ...string) {
		t.Helper()
		for !slices.Equal(slices.Sorted(maps.Keys(s.pending(t, id).InputRequests)), want) {
			time.Sleep(time.Millisecond)
		}
	}
	waitKeys("first", "q1", "q2")
	sendUpdate(t, s, id, `{"first":"a"}`)
	waitKeys("q1", "q2")
	if got := s.pending(t, id); got.Status != InputRequired {
		t.Errorf("half answered, the task is %s", got.Status)
	}
	sendUpdate(t, s, id, `{"q1":"b","q2":"c"}`)
	got := s.pending(t, id)
	for got.Status != Completed {
		got = s.pending(t, id)
	}
	if string(got.Result) != `{"first":"a","q1":"c"}` {
		t.Errorf("the round's answers %s; want each under its key, the taken key asked as q2", got.Result)
	}
	if _, err := s.AskRound(context.Background(), id, map[string]json.RawMessage{"k": elicit}); err == nil || !strings.Contains(err.Error(), `input request "k": no task`) {
		t.Errorf("a round through an ended task: %v", err)
	}
}

// A tasks/update's ack means its answers were taken: a tasks/get right
// after it no longer lists the answered key, while the other stays and
// the task is still input_required (the conformance suite's partial
// fulfillment asks exactly that, with no wait between the two). Asked
// again and again, for a body whose asker has not woken yet.
func TestExtensionStoreAnsweredKeyLeavesWithTheAck(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 1, Extension: true})
	defer s.Close()
	for i := range 100 {
		id := startRound(t, s, "first", "second")
		for len(s.pending(t, id).InputRequests) < 2 {
			time.Sleep(time.Millisecond)
		}
		sendUpdate(t, s, id, `{"first":"a"}`)
		got := s.pending(t, id)
		if keys := slices.Sorted(maps.Keys(got.InputRequests)); got.Status != InputRequired || !slices.Equal(keys, []string{"second"}) {
			t.Fatalf("round %d: right after the ack of first's answer the task is %s with inputRequests %v; want input_required with [second]", i, got.Status, keys)
		}
		sendUpdate(t, s, id, `{"second":"b"}`)
		if got := s.pending(t, id); got.InputRequests != nil {
			t.Fatalf("round %d: right after the last answer's ack the task is %s with inputRequests %v; want none", i, got.Status, slices.Sorted(maps.Keys(got.InputRequests)))
		}
		for s.pending(t, id).Status != Completed {
			time.Sleep(time.Millisecond)
		}
		if _, err := s.Answer(context.Background(), "tasks/cancel", json.RawMessage(`{"taskId":"`+id+`"}`)); err != nil {
			t.Fatal(err) // dismissed: its place is free for the next round
		}
	}
}

// startRound starts a task of s whose body asks one round of questions
// under keys and returns their answers; it returns the task's id.
func startRound(t *testing.T, s *Store, keys ...string) string {
	t.Helper()
	round := make(map[string]json.RawMessage, len(keys))
	for _, key := range keys {
		round[key] = json.RawMessage(`{"method":"elicitation/create","params":{"message":"sure?"}}`)
	}
	raw, err := s.Start(context.Background(), func(ctx context.Context) (json.RawMessage, error) {
		answers, err := s.AskRound(ctx, IDFrom(ctx), round)
		if err != nil {
			return nil, err
		}
		return json.Marshal(answers)
	})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := Created(raw)
	return task.TaskID
}

// sendUpdate sends s the tasks/update of task id with responses.
func sendUpdate(t *testing.T, s *Store, id, responses string) {
	t.Helper()
	if _, err := s.Answer(context.Background(), "tasks/update", json.RawMessage(`{"taskId":"`+id+`","inputResponses":`+responses+`}`)); err != nil {
		t.Fatal(err)
	}
}

// Await hands a task's unanswered round to AnswerRound at once, and
// sends its answers in one tasks/update.
func TestAwaitAnswerRound(t *testing.T) {
	s := NewStoreWith(StoreOptions{Max: 1, Extension: true})
	defer s.Close()
	id := startRound(t, s, "x", "y")
	task := s.pending(t, id)
	for len(task.InputRequests) < 2 {
		task = s.pending(t, id)
	}
	var rounds [][]string
	res, err := Await(context.Background(), storeSender{s}, task, Options{
		AnswerRound: func(_ context.Context, round map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			rounds = append(rounds, slices.Sorted(maps.Keys(round)))
			return map[string]json.RawMessage{"x": json.RawMessage(`1`), "y": json.RawMessage(`2`)}, nil
		},
		After: func(time.Duration) <-chan time.Time { return time.After(time.Millisecond) },
	})
	if err != nil || string(res) != `{"x":1,"y":2}` || len(rounds) != 1 || !slices.Equal(rounds[0], []string{"x", "y"}) {
		t.Errorf("Await = %s, %v after rounds %q; want one round of x and y", res, err, rounds)
	}
}

// pending is task id as the extension's tasks/get reads it.
func (s *Store) pending(t *testing.T, id string) Task {
	t.Helper()
	raw, err := s.Answer(context.Background(), "tasks/get", json.RawMessage(`{"taskId":"`+id+`"}`))
	var task Task
	if err != nil || json.Unmarshal(raw, &task) != nil {
		t.Fatalf("tasks/get %s: %s, %v", id, raw, err)
	}
	return task
}
