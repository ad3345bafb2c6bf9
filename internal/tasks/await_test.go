package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// scripted is a peer that answers each tasks/get with the next of its
// states and records every request; a hostile server's cases (too many
// questions, absurd poll intervals) are what a real one cannot be made to
// send.
type scripted struct {
	states []string
	sent   []string
}

func (s *scripted) Send(_ context.Context, method string, params map[string]json.RawMessage) (json.RawMessage, error) {
	s.sent = append(s.sent, method)
	switch method {
	case "tasks/get":
		next := s.states[0]
		s.states = s.states[1:]
		return json.RawMessage(next), nil
	case "tasks/result":
		return json.RawMessage(`{"content":[]}`), nil
	}
	return json.RawMessage(`{}`), nil
}

// The server's interval is kept within MinPoll and MaxPoll.
func TestAwaitPollBounds(t *testing.T) {
	s := &scripted{states: []string{
		`{"taskId":"t","status":"working","pollIntervalMs":1e12}`,
		`{"taskId":"t","status":"working"}`,
		`{"taskId":"t","status":"completed"}`,
	}}
	var waits []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	first := Task{TaskID: "t", Status: Working, PollInterval: 1}
	if _, err := Await(context.Background(), s, first, Options{After: after}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{MinPoll, MaxPoll, DefaultPoll}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tasks/get", "tasks/get", "tasks/get", "tasks/result"}, s.sent); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A task asking more questions at once than a client answers fails the
// call before anyone is asked.
func TestAwaitTooManyQuestions(t *testing.T) {
	var reqs []string
	for i := range MaxInputRequests + 1 {
		reqs = append(reqs, fmt.Sprintf(`"k%d":{"method":"elicitation/create","params":{}}`, i))
	}
	asked := 0
	answer := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		asked++
		return json.RawMessage(`{}`), nil
	}
	first := Task{TaskID: "t", Status: InputRequired}
	if err := json.Unmarshal([]byte("{"+strings.Join(reqs, ",")+"}"), &first.InputRequests); err != nil {
		t.Fatal(err)
	}
	_, err := Await(context.Background(), &scripted{}, first, Options{Answer: answer})
	if err == nil || !strings.Contains(err.Error(), "asks 17 questions at once, more than the 16") || asked != 0 {
		t.Errorf("err %v, asked %d", err, asked)
	}
}

// A caller that gives up cancels the task on the server.
func TestAwaitCancels(t *testing.T) {
	s := &scripted{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Await(ctx, s, Task{TaskID: "t", Status: Working}, Options{After: func(time.Duration) <-chan time.Time { return nil }})
	if err != context.Canceled || !cmp.Equal(s.sent, []string{"tasks/cancel"}) {
		t.Errorf("err %v, sent %v", err, s.sent)
	}
}

// A caller that hands the task over to another process (a gateway
// replica that stops) stops following it without cancelling it: as it
// waits for the next poll, or while a poll is answered.
func TestAwaitHandedOver(t *testing.T) {
	for _, name := range []string{"waiting", "polling"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			s := &handing{cancel: cancel}
			after := func(time.Duration) <-chan time.Time {
				if name == "waiting" {
					cancel(tool.ErrHandedOver)
					return nil
				}
				ch := make(chan time.Time, 1)
				ch <- time.Time{}
				return ch
			}
			_, err := Await(ctx, s, Task{TaskID: "t", Status: Working}, Options{After: after})
			if !errors.Is(err, tool.ErrHandedOver) || slices.Contains(s.sent, "tasks/cancel") {
				t.Errorf("err %v, sent %v: want the hand-over, and no tasks/cancel", err, s.sent)
			}
		})
	}
}

// handing is a peer whose tasks/get is cut by the caller handing the
// task over; it records every request.
type handing struct {
	cancel context.CancelCauseFunc
	sent   []string
}

func (h *handing) Send(ctx context.Context, method string, _ map[string]json.RawMessage) (json.RawMessage, error) {
	h.sent = append(h.sent, method)
	if method == "tasks/get" {
		h.cancel(tool.ErrHandedOver)
		return nil, context.Cause(ctx)
	}
	return json.RawMessage(`{}`), nil
}

// An extension task that ended as it was made (its creation carries its
// status, not its result) is read with tasks/get at once: the extension
// has no tasks/result, which the 2025-11-25 way would send. One that
// tasks/get still shows ended without its result fails, saying so.
func TestAwaitExtensionEndedAtCreation(t *testing.T) {
	created, err := Created(json.RawMessage(`{"resultType":"task","taskId":"t","status":"completed"}`))
	if err != nil || !created.Extension {
		t.Fatalf("created %+v, %v; want an extension task", created, err)
	}
	never := func(time.Duration) <-chan time.Time { t.Fatal("waited a poll interval"); return nil }
	s := &scripted{states: []string{`{"taskId":"t","status":"completed","result":{"content":[]}}`}}
	raw, err := Await(context.Background(), s, *created, Options{After: never})
	if err != nil || string(raw) != `{"content":[]}` {
		t.Fatalf("result %s, %v", raw, err)
	}
	if diff := cmp.Diff([]string{"tasks/get"}, s.sent); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	s = &scripted{states: []string{`{"taskId":"t","status":"completed"}`}}
	_, err = Await(context.Background(), s, *created, Options{After: never})
	if err == nil || !strings.Contains(err.Error(), "task t is completed but tasks/get carries neither its result nor its questions") {
		t.Errorf("a completed task without its result: %v", err)
	}
	if diff := cmp.Diff([]string{"tasks/get"}, s.sent); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
