package tool_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// recorder records strings (calls, updates) for a test to check.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
}

// check fails the test unless exactly want was recorded since the last
// check.
func (r *recorder) check(t *testing.T, when string, want ...string) {
	t.Helper()
	r.mu.Lock()
	got := r.got
	r.got = nil
	r.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", when, diff)
	}
}

// updates records the URIs one subscriber is told of (its add is the
// callback).
type updates = recorder

// subServer is the subscription side of a server: it records what it was
// asked, and refuses subscriptions while refuse is set.
type subServer struct {
	recorder
	refuse error // guarded by recorder.mu
}

func (s *subServer) subscribe(_ context.Context, uri string) error {
	s.add("subscribe " + uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refuse
}

func (s *subServer) unsubscribe(_ context.Context, uri string) error {
	s.add("unsubscribe " + uri)
	return errors.New("unsubscribe failed") // ignored: best effort
}

// setRefuse makes Subscribe fail with err (nil: succeed).
func (s *subServer) setRefuse(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = err
}

// offer is an offer of server name whose subscriptions s answers.
func (s *subServer) offer(name string) tool.Offer {
	o := server(name, []string{"file:///a"}, nil)
	o.Subscribe, o.Unsubscribe = s.subscribe, s.unsubscribe
	return o
}

// mustSubscribe subscribes u to uri of server, or fails the test.
func mustSubscribe(t *testing.T, r *tool.Registry, server, uri string, u *updates) func() {
	t.Helper()
	cancel, err := r.SubscribeResource(context.Background(), server, uri, u.add)
	if err != nil {
		t.Fatalf("SubscribeResource(%s, %s): %v", server, uri, err)
	}
	return cancel
}

func TestSubscribeResourceSharesOneServerSubscription(t *testing.T) {
	r := tool.NewRegistry()
	srv := &subServer{}
	src := mustPublishOffer(t, r, srv.offer("files"))
	var u1, u2 updates
	cancel1 := mustSubscribe(t, r, "files", "file:///a", &u1)
	cancel2 := mustSubscribe(t, r, "files", "file:///a", &u2)
	srv.check(t, "two subscribers: the server", "subscribe file:///a")

	src.ResourceUpdated("file:///a")
	src.ResourceUpdated("file:///b") // nobody subscribed to it
	u1.check(t, "first subscriber: updates", "file:///a")
	u2.check(t, "second subscriber: updates", "file:///a")

	cancel1()
	cancel1() // idempotent
	srv.check(t, "one subscriber left: the server")
	src.ResourceUpdated("file:///a")
	u1.check(t, "cancelled subscriber: updates")
	u2.check(t, "remaining subscriber: updates", "file:///a")

	cancel2()
	srv.check(t, "the last one left: the server", "unsubscribe file:///a")
	cancel2()
	cancel1()
	srv.check(t, "cancels repeated: the server")
	src.ResourceUpdated("file:///a")
	u2.check(t, "after the last cancel: updates")

	cancel3 := mustSubscribe(t, r, "files", "file:///a", &u1) // asked afresh
	defer cancel3()
	srv.check(t, "subscribing again: the server", "subscribe file:///a")
}

func TestSubscribeResourceRefused(t *testing.T) {
	r := tool.NewRegistry()
	mustPublishOffer(t, r, server("plain", []string{"file:///a"}, nil))
	tests := []struct {
		name, server, wantErr string
		is                    error
	}{
		{name: "unknown server", server: "nope", wantErr: `no such server "nope" offers resources or prompts`, is: tool.ErrNoServer},
		{name: "server without subscriptions", server: "plain", wantErr: `server "plain": resource subscriptions are not offered by the server`, is: tool.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u updates
			cancel, err := r.SubscribeResource(context.Background(), tt.server, "file:///a", u.add)
			checkErr(t, err, tt.wantErr, tt.is)
			if cancel != nil {
				t.Error("a refused subscription returned a cancel func")
			}
		})
	}
}

// TestSubscribeFailureForgetsTheSubscription: a subscription the server
// refused is gone, so the next subscriber asks the server again.
func TestSubscribeFailureForgetsTheSubscription(t *testing.T) {
	r := tool.NewRegistry()
	srv := &subServer{}
	src := mustPublishOffer(t, r, srv.offer("files"))
	refusal := errors.New("subscriptions are full")
	srv.setRefuse(refusal)
	var refused, later updates
	cancel, err := r.SubscribeResource(context.Background(), "files", "file:///a", refused.add)
	if !errors.Is(err, refusal) || cancel != nil {
		t.Fatalf("SubscribeResource = %v, %v; want the server's error and no cancel", cancel != nil, err)
	}
	src.ResourceUpdated("file:///a")
	refused.check(t, "refused subscriber: updates")

	srv.setRefuse(nil)
	cancel = mustSubscribe(t, r, "files", "file:///a", &later)
	srv.check(t, "after the refusal: the server", "subscribe file:///a", "subscribe file:///a")
	src.ResourceUpdated("file:///a")
	later.check(t, "later subscriber: updates", "file:///a")
	refused.check(t, "refused subscriber, later: updates")
	cancel()
	srv.check(t, "after the cancel: the server", "unsubscribe file:///a")
}

// TestUnsubscribeIsBestEffort: the last cancel sends nothing to a server
// that cannot unsubscribe or has gone.
func TestUnsubscribeIsBestEffort(t *testing.T) {
	tests := []struct {
		name  string
		offer func(*subServer) tool.Offer
		leave bool // the server's source closes before the cancel
	}{
		{name: "no Unsubscribe", offer: func(s *subServer) tool.Offer {
			o := s.offer("files")
			o.Unsubscribe = nil
			return o
		}},
		{name: "server gone", offer: func(s *subServer) tool.Offer { return s.offer("files") }, leave: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			srv := &subServer{}
			src := mustPublishOffer(t, r, tt.offer(srv))
			var u updates
			cancel := mustSubscribe(t, r, "files", "file:///a", &u)
			if tt.leave {
				src.Close()
			}
			cancel()
			srv.check(t, "after the cancel: the server", "subscribe file:///a")
		})
	}
}

func TestResourceUpdatedReachesOnlyItsServersSubscribers(t *testing.T) {
	r := tool.NewRegistry()
	unpublished := r.NewSource()
	unpublished.ResourceUpdated("file:///a") // no handle yet: a no-op
	toolsOnly := r.NewSource()
	mustPublish(t, toolsOnly, defs("t")...)
	srvA, srvB := &subServer{}, &subServer{}
	a := mustPublishOffer(t, r, srvA.offer("a"))
	b := mustPublishOffer(t, r, srvB.offer("b"))
	var u updates
	cancel := mustSubscribe(t, r, "a", "file:///a", &u)
	defer cancel()

	toolsOnly.ResourceUpdated("file:///a")
	b.ResourceUpdated("file:///a") // same URI, another server
	a.ResourceUpdated("file:///other")
	u.check(t, "updates of others: updates")
	a.ResourceUpdated("file:///a")
	u.check(t, "its own update: updates", "file:///a")
	a.Clear()
	a.ResourceUpdated("file:///a") // cleared: no longer the server's source
	u.check(t, "after Clear: updates")
}

// TestSubscribeConcurrently: subscribers coming and going at once leave the
// server asked to stop exactly as often as to start.
func TestSubscribeConcurrently(t *testing.T) {
	r := tool.NewRegistry()
	srv := &subServer{}
	src := mustPublishOffer(t, r, srv.offer("files"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var u updates
			for range 50 {
				cancel, err := r.SubscribeResource(context.Background(), "files", "file:///a", u.add)
				if err != nil {
					t.Error(err)
					return
				}
				src.ResourceUpdated("file:///a")
				cancel()
			}
		})
	}
	wg.Wait()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var subs, unsubs int
	for _, call := range srv.got {
		if strings.HasPrefix(call, "subscribe ") {
			subs++
		} else {
			unsubs++
		}
	}
	if subs == 0 || subs != unsubs {
		t.Errorf("server asked to subscribe %d times and to unsubscribe %d times, want as many (and some)", subs, unsubs)
	}
}

// gatedServer is a subscription side whose first call of each kind blocks
// until released, so a test can interleave subscribers with it.
type gatedServer struct {
	subServer
	entered, release chan struct{}
	gate             sync.Once
}

func newGatedServer() *gatedServer {
	return &gatedServer{entered: make(chan struct{}), release: make(chan struct{})}
}

// hold blocks the first call it is part of until release is closed.
func (g *gatedServer) hold() {
	g.gate.Do(func() {
		close(g.entered)
		<-g.release
	})
}

// A subscriber arriving while the server is refusing the first one's
// subscription waits for the answer and asks again: it never holds a
// subscription the server did not accept.
func TestSubscribeJoinerOfARefusedSubscription(t *testing.T) {
	r := tool.NewRegistry()
	g := newGatedServer()
	o := g.offer("files")
	o.Subscribe = func(ctx context.Context, uri string) error {
		err := g.subscribe(ctx, uri)
		g.hold()
		return err
	}
	mustPublishOffer(t, r, o)
	g.setRefuse(errors.New("refused"))
	first := make(chan error)
	go func() {
		_, err := r.SubscribeResource(context.Background(), "files", "file:///a", func(string) {})
		first <- err
	}()
	<-g.entered
	second := make(chan error)
	go func() {
		cancel, err := r.SubscribeResource(context.Background(), "files", "file:///a", func(string) {})
		if err == nil {
			cancel()
		}
		second <- err
	}()
	g.setRefuse(nil) // the server accepts from now on
	close(g.release)
	if err := <-first; err == nil || err.Error() != "refused" {
		t.Errorf("first subscriber: err = %v, want refused", err)
	}
	if err := <-second; err != nil {
		t.Errorf("second subscriber: %v", err)
	}
	g.check(t, "server calls", "subscribe file:///a", "subscribe file:///a", "unsubscribe file:///a")
}

// The last subscriber's unsubscribe is answered before a new subscriber's
// subscribe is sent, so the server ends up subscribed.
func TestUnsubscribeNeverOvertakesSubscribe(t *testing.T) {
	r := tool.NewRegistry()
	g := newGatedServer()
	o := g.offer("files")
	o.Unsubscribe = func(ctx context.Context, uri string) error {
		g.hold()
		return g.unsubscribe(ctx, uri)
	}
	mustPublishOffer(t, r, o)
	var u updates
	cancel := mustSubscribe(t, r, "files", "file:///a", &u)
	left := make(chan struct{})
	go func() { cancel(); close(left) }()
	<-g.entered // the unsubscribe is on its way
	joined := make(chan func())
	go func() { joined <- mustSubscribe(t, r, "files", "file:///a", &u) }()
	close(g.release)
	<-left
	(<-joined)()
	g.check(t, "server calls", "subscribe file:///a", "unsubscribe file:///a", "subscribe file:///a", "unsubscribe file:///a")
}

// A successor that takes a server over (a restarted connection) is asked
// for the subscriptions its predecessor held, and updates keep flowing.
func TestSubscriptionsRenewedWithSuccessor(t *testing.T) {
	r := tool.NewRegistry()
	old, fresh := &subServer{}, &subServer{}
	src := mustPublishOffer(t, r, old.offer("files"))
	var u updates
	cancel := mustSubscribe(t, r, "files", "file:///a", &u)
	defer cancel()
	next := src.Successor()
	publishOrFail(t, next, fresh.offer("files"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		fresh.mu.Lock()
		n := len(fresh.got)
		fresh.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fresh.check(t, "successor asked", "subscribe file:///a")
	old.check(t, "predecessor asked", "subscribe file:///a")
	next.ResourceUpdated("file:///a")
	u.check(t, "update through the successor", "file:///a")
	publishOrFail(t, next, fresh.offer("files")) // a re-publish asks nothing again
	fresh.check(t, "after a re-publish")
}

// A server that never answers a subscribe or an unsubscribe stalls only
// its own resource: another server's subscriptions come and go meanwhile,
// and so do the hung server's other resources.
func TestSlowServerStallsOnlyItsResource(t *testing.T) {
	r := tool.NewRegistry()
	hung := newGatedServer()
	ho := hung.offer("hung")
	ho.Subscribe = func(ctx context.Context, uri string) error {
		if uri == "file:///stuck" {
			hung.hold()
		}
		return hung.subscribe(ctx, uri)
	}
	mustPublishOffer(t, r, ho)
	var other subServer
	mustPublishOffer(t, r, other.offer("other"))

	stuck := make(chan error)
	go func() {
		cancel, err := r.SubscribeResource(context.Background(), "hung", "file:///stuck", func(string) {})
		if err == nil {
			cancel()
		}
		stuck <- err
	}()
	<-hung.entered // the subscribe is on the wire, unanswered
	var u updates
	mustSubscribe(t, r, "other", "file:///a", &u)()
	other.check(t, "the other server's calls while the first hangs", "subscribe file:///a", "unsubscribe file:///a")
	mustSubscribe(t, r, "hung", "file:///b", &u)()
	hung.check(t, "the hung server's other resource", "subscribe file:///b", "unsubscribe file:///b")
	close(hung.release)
	if err := <-stuck; err != nil {
		t.Fatal(err)
	}
}

// A successor's renewal of its predecessor's subscriptions belongs to the
// successor: its Close ends a renewal the server leaves unanswered, and
// waits for it.
func TestRenewalEndsWithItsSource(t *testing.T) {
	r := tool.NewRegistry()
	old := &subServer{}
	src := mustPublishOffer(t, r, old.offer("files"))
	var u updates
	cancel := mustSubscribe(t, r, "files", "file:///a", &u)
	defer cancel()
	entered, returned := make(chan struct{}), make(chan struct{})
	hung := old.offer("files")
	hung.Subscribe = func(ctx context.Context, _ string) error {
		close(entered)
		<-ctx.Done() // never answers
		close(returned)
		return ctx.Err()
	}
	next := src.Successor()
	publishOrFail(t, next, hung)
	<-entered
	next.Close()
	select {
	case <-returned:
	default:
		t.Error("Close returned with the renewal still running")
	}
}

// waitCtx reports, by closing waiting, that a subscriber waits for its
// subscription's answer (its select is the first to ask for Done).
type waitCtx struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *waitCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// A subscription a predecessor refuses while a successor takes its server
// over (a restart: the old connection closing) is asked of the successor,
// by its first subscriber and by those who joined it alike (they failed
// with the predecessor's refusal, or asked it again).
func TestSubscribeJoinerAsksTheSuccessor(t *testing.T) {
	r := tool.NewRegistry()
	old, fresh := newGatedServer(), &subServer{}
	o := old.offer("files")
	o.Subscribe = func(ctx context.Context, uri string) error {
		err := old.subscribe(ctx, uri)
		old.hold()
		return err
	}
	src := mustPublishOffer(t, r, o)
	old.setRefuse(errors.New("connection closed"))
	var u, u1 updates
	first := make(chan func())
	go func() { first <- mustSubscribeOrNot(t, r, context.Background(), "first", &u1) }()
	<-old.entered
	joined := &waitCtx{Context: context.Background(), waiting: make(chan struct{})}
	second := make(chan func())
	go func() { second <- mustSubscribeOrNot(t, r, joined, "second", &u) }()
	<-joined.waiting
	next := src.Successor()
	defer next.Close()
	publishOrFail(t, next, fresh.offer("files"))
	close(old.release)
	defer (<-first)()
	defer (<-second)()
	next.ResourceUpdated("file:///a")
	u1.check(t, "first subscriber: updates through the successor", "file:///a")
	u.check(t, "second subscriber: updates through the successor", "file:///a")
	old.check(t, "predecessor asked", "subscribe file:///a")
}

// mustSubscribeOrNot subscribes u to file:///a of files, from a goroutine
// of the test: a failure is reported, and its cancel is a no-op.
func mustSubscribeOrNot(t *testing.T, r *tool.Registry, ctx context.Context, who string, u *updates) func() {
	cancel, err := r.SubscribeResource(ctx, "files", "file:///a", u.add)
	if err != nil {
		t.Errorf("%s subscriber: %v", who, err)
		return func() {}
	}
	return cancel
}
