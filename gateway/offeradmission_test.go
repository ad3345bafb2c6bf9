package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// shortNames is a countingGate that knows a prompt (mcp__docs__work) or
// a resource (note://work) by its last name (work), as it knows a tool.
type shortNames struct{ *countingGate }

func (s shortNames) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	c.Tool = path.Base(strings.ReplaceAll(c.Tool, "__", "/"))
	return s.countingGate.Enter(ctx, c)
}

// twoQuestions is a 2026-07-28 backend's side of a request that asks its
// client two questions, a round each (first, then second), through
// input-required results: the next round's questions and the backend's
// requestState, or, once both are answered, the text it answers with.
func twoQuestions(state string, in mcp.InputResponseMap) (mcp.InputRequestMap, string, string) {
	ask := func(key string) mcp.InputRequestMap {
		return mcp.InputRequestMap{key: &mcp.ElicitParams{Message: key + "?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)}}
	}
	answer := func(key string) string {
		if r, ok := in[key].(*mcp.ElicitResult); ok {
			return fmt.Sprint(r.Content["v"])
		}
		return "none"
	}
	switch state {
	case "":
		return ask("first"), "asked first", ""
	case "asked first":
		return ask("second"), "first=" + answer("first"), ""
	}
	return nil, "", state + " second=" + answer("second")
}

// errBroken is what the backend's "fail" prompt and resource end with,
// once both their questions are answered.
var errBroken = errors.New("broken backend")

// twiceAskingOffers registers, in reg, a 2026-07-28 backend "docs" whose
// prompts and resources (note://<name>) work, deny, limited and fail
// each ask their client two questions (twoQuestions) and then answer
// with both answers; fail then fails instead.
func twiceAskingOffers(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	for _, name := range []string{"work", "deny", "limited", "fail"} {
		srv.AddPrompt(&mcp.Prompt{Name: name}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			asks, state, text := twoQuestions(req.Params.RequestState, req.Params.InputResponses)
			switch {
			case asks != nil:
				return &mcp.GetPromptResult{InputRequests: asks, RequestState: state}, nil
			case name == "fail":
				return nil, errBroken
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
		uri := "note://" + name
		srv.AddResource(&mcp.Resource{URI: uri, Name: name}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			asks, state, text := twoQuestions(req.Params.RequestState, req.Params.InputResponses)
			switch {
			case asks != nil:
				return &mcp.ReadResourceResult{InputRequests: asks, RequestState: state}, nil
			case name == "fail":
				return nil, errBroken
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: text}}}, nil
		})
	}
	startMemBackendWith(t, mcpclient.Config{ServerName: "docs", Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg, Elicit: true}, srv)
}

// offerAnswer is what a prompts/get or resources/read was answered with:
// questions and the gateway's requestState, or the text of the result.
type offerAnswer struct {
	requests mcp.InputRequestMap
	state    string
	text     string
}

// offerKind is prompts/get or resources/read, as a client sends it.
type offerKind struct {
	method string
	// get asks for the prompt or resource name (work, deny, …), again
	// with state and answers when state is set.
	get func(ctx context.Context, cs *mcp.ClientSession, name, state string, answers mcp.InputResponseMap) (offerAnswer, error)
}

var offerKinds = []offerKind{
	{method: MethodGetPrompt, get: func(ctx context.Context, cs *mcp.ClientSession, name, state string, answers mcp.InputResponseMap) (offerAnswer, error) {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__docs__" + name, RequestState: state, InputResponses: answers})
		if err != nil {
			return offerAnswer{}, err
		}
		if res.NeedsInput() {
			return offerAnswer{requests: res.InputRequests, state: res.RequestState}, nil
		}
		var text string
		if len(res.Messages) == 1 {
			if c, ok := res.Messages[0].Content.(*mcp.TextContent); ok {
				text = c.Text
			}
		}
		return offerAnswer{text: text}, nil
	}},
	{method: MethodReadResource, get: func(ctx context.Context, cs *mcp.ClientSession, name, state string, answers mcp.InputResponseMap) (offerAnswer, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://" + name, RequestState: state, InputResponses: answers})
		if err != nil {
			return offerAnswer{}, err
		}
		if res.NeedsInput() {
			return offerAnswer{requests: res.InputRequests, state: res.RequestState}, nil
		}
		var text string
		if len(res.Contents) == 1 {
			text = res.Contents[0].Text
		}
		return offerAnswer{text: text}, nil
	}},
}

// offerPaths are the ways a 2026-07-28 client that answers input-required
// results itself reaches a gateway serving reg with opts.
var offerPaths = map[string]func(t *testing.T, reg *tool.Registry, opts Options) (*Gateway, *mcp.ClientSession){
	"HTTP stateless": func(t *testing.T, reg *tool.Registry, opts Options) (*Gateway, *mcp.ClientSession) {
		opts.Stateless = true
		g := newGateway(t, reg, opts)
		return g, manualClient(t, serveHTTP(t, g, opts), "")
	},
	"in memory, 2026-07-28": func(t *testing.T, reg *tool.Registry, opts Options) (*Gateway, *mcp.ClientSession) {
		g := newGateway(t, reg, opts)
		return g, manualInMemory(t, g)
	},
}

// stateRefused fails t unless err refuses a requestState.
func stateRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "requestState is not one this gateway holds for this call") {
		t.Errorf("%s: %v; want the requestState refused", what, err)
	}
}

// A prompts/get or resources/read asked two questions through
// input-required results is one call to the Gate, as a tools/call is
// (TestOneAdmissionPerLogicalCall): its first round enters, the rounds
// that park it end nothing, the retries that bring the answers enter
// nothing (so they write no audit line and spend no rate token), and it
// is ended once, with its true outcome, when the backend's request
// returns. It holds one call slot throughout, taken by its first round
// and given back when the backend's request returns. Denied, it enters
// once and gets no state; rate limited, its first logical call spends
// the only token however many rounds it takes, and the next is refused.
// A retry with an altered state, with the state of a call that ended,
// or naming a denied one is refused at once and enters nothing; and
// nothing is left behind: no slot, no parked call.
func TestAdmissionOfferRoundsEnterOnce(t *testing.T) {
	for pathName, open := range offerPaths {
		for _, kind := range offerKinds {
			t.Run(pathName+", "+kind.method, func(t *testing.T) {
				reg := tool.NewRegistry()
				twiceAskingOffers(t, reg)
				gate := newCountingGate()
				g, cs := open(t, reg, Options{Gate: shortNames{gate}})
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				defer cancel()

				// through asks name's two questions, checking the Gate's
				// record of it at each round, and returns the last answer
				// and the state it was sent with.
				through := func(name string, wantEntered int, wantEnded []Outcome) (offerAnswer, string, error) {
					t.Helper()
					got, err := kind.get(ctx, cs, name, "", nil)
					state := ""
					for _, key := range []string{"first", "second"} {
						if err != nil || got.requests[key] == nil || len(got.requests) != 1 || !strings.HasPrefix(got.state, "mcpbridge.") {
							t.Fatalf("%s, round %s: %+v, %v; want the question %s and the gateway's state", name, key, got, err, key)
						}
						gate.expect(t, name, counts{Entered: wantEntered, Ended: wantEnded})
						g.mu.Lock()
						slots, inFlight := g.slotsTaken(), g.inFlight
						g.mu.Unlock()
						if slots != 1 || inFlight != 1 {
							t.Errorf("%s parked for %s: %d slots taken, %d calls in flight; want the one of its first round", name, key, slots, inFlight)
						}
						if key == "second" {
							_, err := kind.get(ctx, cs, name, got.state+"x", mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "b"}}})
							stateRefused(t, name+" again with an altered state", err)
							gate.expect(t, name, counts{Entered: wantEntered, Ended: wantEnded})
						}
						state = got.state
						got, err = kind.get(ctx, cs, name, state, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": key[:1]}}})
					}
					return got, state, err
				}

				done, state, err := through("work", 1, nil)
				if err != nil || done.text != "first=f second=s" {
					t.Fatalf("work answered: %+v, %v; want the backend's result of both answers", done, err)
				}
				gate.expect(t, "work", counts{Entered: 1, Ended: okOutcome})
				_, err = kind.get(ctx, cs, "work", state, mcp.InputResponseMap{"second": &mcp.ElicitResult{Action: "accept"}})
				stateRefused(t, "work again once it ended", err)
				gate.expect(t, "work", counts{Entered: 1, Ended: okOutcome})

				_, _, err = through("fail", 1, nil)
				if err == nil || !strings.Contains(err.Error(), errBroken.Error()) {
					t.Errorf("fail answered: %v; want the backend's failure", err)
				}
				gate.expect(t, "fail", counts{Entered: 1, Ended: []Outcome{{Failed: true}}})

				if _, err := kind.get(ctx, cs, "deny", "", nil); !hasCode(err, codeDenied) {
					t.Errorf("deny: %v; want the Gate's error %d", err, codeDenied)
				}
				gate.expect(t, "deny", counts{Entered: 1})
				_, err = kind.get(ctx, cs, "deny", "mcpbridge.forged", mcp.InputResponseMap{"first": &mcp.ElicitResult{Action: "accept"}})
				stateRefused(t, "deny again with a state never given", err)
				gate.expect(t, "deny", counts{Entered: 1})

				if done, _, err := through("limited", 1, nil); err != nil || done.text != "first=f second=s" {
					t.Fatalf("limited, its first call: %+v, %v; want the result", done, err)
				}
				gate.expect(t, "limited", counts{Entered: 1, Ended: okOutcome})
				if _, err := kind.get(ctx, cs, "limited", "", nil); !hasCode(err, codeLimited) {
					t.Errorf("limited, its second call: %v; want the rate limit's error %d", err, codeLimited)
				}
				gate.expect(t, "limited", counts{Entered: 2, Ended: okOutcome})

				waitFor(t, "no slot taken and no call parked", func() bool {
					if len(g.ParkedCalls(nil)) > 0 {
						return false
					}
					g.mu.Lock()
					defer g.mu.Unlock()
					return g.slotsTaken() == 0 && g.inFlight == 0
				})
			})
		}
	}
}

// A prompts/get or resources/read takes one of its session's call slots
// until it returns, as a tools/call does, before the Gate: with one slot a
// session, a prompts/get its backend holds leaves a resources/read
// refused at once with the limit, which enters nothing; once the prompt
// returned, the read is served. They used to take none, so a client
// could hold any number of backend requests at once.
func TestAdmissionOfferTakesASlot(t *testing.T) {
	reg := tool.NewRegistry()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	held, release := make(chan struct{}, 1), make(chan struct{})
	srv.AddPrompt(&mcp.Prompt{Name: "hold"}, func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		held <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "held"}}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "note://work", Name: "work"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "note://work", Text: "read"}}}, nil
	})
	startMemBackendWith(t, mcpclient.Config{ServerName: "docs", Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg}, srv)
	gate := newCountingGate()
	g := newGateway(t, reg, Options{Gate: shortNames{gate}, MaxCallsPerSession: 1})
	cs, _ := connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, nil), nil)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	got := make(chan error, 1)
	go func() {
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__docs__hold"})
		got <- err
	}()
	waitSignal(t, held, "the prompt held by its backend")
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://work"})
	if err == nil || !strings.Contains(err.Error(), "in flight on this session (the gateway's limit is 1)") {
		t.Errorf("a read while a prompt holds the session's only slot: %v; want the limit", err)
	}
	gate.expect(t, "work", counts{})
	close(release)
	if err := waitSignal(t, got, "the prompt's answer"); err != nil {
		t.Fatal(err)
	}
	gate.expect(t, "hold", counts{Entered: 1, Ended: okOutcome})
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://work"}); err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "read" {
		t.Errorf("the read once the prompt returned: %+v, %v; want it served", res, err)
	}
	gate.expect(t, "work", counts{Entered: 1, Ended: okOutcome})
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.slotsTaken() != 0 || g.inFlight != 0 {
		t.Errorf("slots taken once both returned: %d of the session's, %d of the gateway's; want none", g.slotsTaken(), g.inFlight)
	}
}
