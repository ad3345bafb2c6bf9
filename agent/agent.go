package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The chat-completions shapes the loop speaks. They are the agent's
// public API (a harness's own Model takes and returns them) and are
// defined in internal/chatapi, which sampling shares without depending on
// the agent. They are aliases by decision, not left over from a move: so
// *chatapi.Client, what NewModel returns, is a Model without an adapter,
// and no public package is added only to hold six struct types.
type (
	Message    = chatapi.Message
	ToolCall   = chatapi.ToolCall
	Request    = chatapi.Request
	Completion = chatapi.Completion
	Delta      = chatapi.Delta
	Usage      = chatapi.Usage
)

// Model streams one answer to a request, reporting each piece to on as it
// arrives. *chatapi.Client (what NewModel returns) is one.
type Model interface {
	Stream(ctx context.Context, req *Request, on func(Delta)) (*Completion, error)
}

// Defaults of Options.
const (
	DefaultMaxSteps     = 50
	DefaultResultTokens = 25_000
)

// ErrMaxSteps ends a Run whose model still called tools at the last step
// allowed.
var ErrMaxSteps = errors.New("the model still calls tools after the most steps allowed (--max-steps)")

// Options configure an Agent. The zero value of each optional field is a
// useful default; Options are not changed by the Agent.
type Options struct {
	// Model answers; required. ModelName is sent as the request's model.
	Model     Model
	ModelName string
	// StrictModel answers instead of Model when a request has strict
	// tools (DeepSeek's beta endpoint); nil: Model.
	StrictModel Model
	// Strict asks for strict function calling for the tools whose schemas
	// allow it (see StrictSchema); the others are sent as they are.
	Strict bool
	// Registry runs the calls; required.
	Registry *tool.Registry
	// Tools returns the tools the model sees at each step (a toolview
	// Session's Tools); nil: Registry.List.
	Tools func() ([]tool.Tool, error)
	// System is the system prompt; "" sends none.
	System string
	// MaxSteps bounds the model requests of one Run; 0: DefaultMaxSteps.
	MaxSteps int
	// ResultTokens is the cap on the tokens of one tool result sent to the
	// model; 0: DefaultResultTokens.
	ResultTokens int
	// SpillDir receives the whole text of a result over the cap; "":
	// such results are cut without a file.
	SpillDir string
	// Approver is asked before each call; nil: every call is approved.
	Approver Approver
	// CallContext derives the context of one call (to show its progress,
	// say); nil: the turn's context.
	CallContext func(ctx context.Context, c Call) context.Context
	// Events receives what happens, in order; nil: nothing.
	Events func(Event)
	// Record receives every message added to the conversation, in order
	// (a Session's Append); an error ends the Run.
	Record func(Message) error
	// Now is the clock for durations; nil: time.Now.
	Now func() time.Time
}

// Result is the outcome of a Run: the final answer, the steps taken, the
// usage of the Run and of the whole conversation.
type Result struct {
	Text  string `json:"text"`
	Steps int    `json:"steps"`
	Usage Usage  `json:"usage"`
	Total Usage  `json:"total"`
}

// Agent is one conversation. See the package doc.
type Agent struct {
	opts    Options
	history []Message
	total   Usage
	strict  *strictCache
	emitMu  sync.Mutex
	// rank is the order tools were first sent in: a tool that appears
	// later (a search loaded it) goes after them, so the prefix of the
	// tools, and DeepSeek's prompt cache with it, stays.
	rank map[string]int
}

// New returns an agent with an empty conversation.
func New(opts Options) (*Agent, error) {
	if opts.Model == nil || opts.Registry == nil {
		return nil, errors.New("agent: Options.Model and Options.Registry are required")
	}
	return &Agent{opts: opts, strict: newStrictCache(), rank: map[string]int{}}, nil
}

// History returns the conversation so far (not the system prompt).
func (a *Agent) History() []Message { return append([]Message(nil), a.history...) }

// Resume sets the conversation to msgs (a saved session's), as if it had
// happened in this Agent. Tools are not replayed: calls in msgs keep their
// recorded results, new calls go to the registry of today.
func (a *Agent) Resume(msgs []Message) { a.history = append([]Message(nil), msgs...) }

// Clear forgets the conversation.
func (a *Agent) Clear() { a.history, a.total = nil, Usage{} }

// Run adds prompt as the user's message and loops until the model
// answers without tool calls (Result), the step limit (ErrMaxSteps, with
// the partial Result), or a failure of the model, of Record or of ctx.
// A prompt the model never answered (a Run that failed or was cancelled
// before its first answer) and the next Run's are one turn, the same
// question asked again standing once.
func (a *Agent) Run(ctx context.Context, prompt string) (*Result, error) {
	res := &Result{}
	if err := a.add(Message{Role: "user", Content: prompt}); err != nil {
		return res, err
	}
	for res.Steps < a.maxSteps() {
		res.Steps++
		c, err := a.step(ctx)
		if err != nil {
			return a.done(res), err
		}
		res.Usage = res.Usage.Add(c.Usage)
		a.total = a.total.Add(c.Usage)
		a.nameCalls(c.Message.ToolCalls)
		if err := a.add(assistant(c.Message)); err != nil {
			a.history = completeCalls(a.history) // as a resume would read it
			return a.done(res), err
		}
		if len(c.Message.ToolCalls) == 0 {
			res.Text, _ = c.Message.Content.(string)
			return a.done(res), nil
		}
		if err := a.runCalls(ctx, c.Message.ToolCalls); err != nil {
			// A result that could not be recorded leaves calls without
			// results, which the API refuses.
			a.history = completeCalls(a.history)
			return a.done(res), err
		}
		if err := ctx.Err(); err != nil {
			return a.done(res), err // the turn was cancelled while its calls ran
		}
	}
	return a.done(res), ErrMaxSteps
}

func (a *Agent) done(res *Result) *Result {
	res.Total = a.total
	return res
}

func (a *Agent) maxSteps() int {
	if a.opts.MaxSteps > 0 {
		return a.opts.MaxSteps
	}
	return DefaultMaxSteps
}

// nameCalls gives an id to each call the model sent without one (some
// local servers send none): its result goes back under it, and the API
// requires one.
func (a *Agent) nameCalls(calls []ToolCall) {
	for i := range calls {
		if calls[i].ID == "" {
			calls[i].ID = fmt.Sprintf("call_%d_%d", len(a.history), i)
		}
	}
}

// assistant is the message kept of an answer: its reasoning only beside
// tool calls, as DeepSeek wants (it ignores reasoning elsewhere, and
// older models refused it).
func assistant(m Message) Message {
	if len(m.ToolCalls) == 0 {
		m.ReasoningContent = ""
	}
	return m
}

func (a *Agent) add(m Message) error {
	a.history = withMessage(a.history, m)
	if a.opts.Record != nil {
		if err := a.opts.Record(m); err != nil {
			return fmt.Errorf("recording the conversation: %w", err)
		}
	}
	return nil
}

// step sends one request and streams its answer as events.
func (a *Agent) step(ctx context.Context) (*Completion, error) {
	req, strict, err := a.request()
	if err != nil {
		return nil, err
	}
	model := a.opts.Model
	if strict && a.opts.StrictModel != nil {
		model = a.opts.StrictModel
	}
	c, err := model.Stream(ctx, req, a.delta)
	if err != nil {
		return nil, err
	}
	a.emit(Event{Type: EventUsage, Usage: &c.Usage})
	if why := endedEarly(c.FinishReason); why != "" {
		a.emit(Event{Type: EventNotice, Text: "the answer ended before the model did: " + why})
	}
	return c, nil
}

// endedEarly says why an answer that finished for reason is not the
// model's whole answer; "" when it is.
func endedEarly(reason string) string {
	switch reason {
	case "", "stop", "tool_calls":
		return ""
	case "length":
		return "it reached the most tokens an answer may have (finish_reason length)"
	case "content_filter":
		return "the API's content filter stopped it (finish_reason content_filter)"
	case "insufficient_system_resource":
		return "the API ran short of resources (finish_reason insufficient_system_resource): ask again"
	}
	return "the API ended it with finish_reason " + strconv.Quote(textcut.Marked(reason, 100, "…"))
}

// request is the next request: the system prompt, the conversation, and
// the tools in their stable order. strict says whether a tool is strict.
func (a *Agent) request() (*Request, bool, error) {
	tools, err := a.tools()
	if err != nil {
		return nil, false, fmt.Errorf("listing the tools: %w", err)
	}
	tools = a.stableOrder(tools)
	req := &Request{Model: a.opts.ModelName, Messages: make([]Message, 0, len(a.history)+1)}
	if a.opts.System != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Content: a.opts.System})
	}
	req.Messages = append(req.Messages, a.history...)
	var loose []string
	req.Tools, loose = a.strict.chatTools(tools, a.opts.Strict)
	strict := a.opts.Strict && len(loose) < len(tools)
	if a.opts.Strict && len(loose) > 0 && a.strict.tell(loose) {
		a.emit(Event{Type: EventNotice, Text: fmt.Sprintf("strict function calling: %d of %d tools are sent without strict (their schemas have optional or open properties): %s",
			len(loose), len(tools), joinShort(loose))})
	}
	return req, strict, nil
}

// Tools returns the tools the model sees now, as the next request will
// send them.
func (a *Agent) Tools() ([]tool.Tool, error) { return a.tools() }

// stableOrder sorts tools in the order they were first sent, the new ones
// last in the order given.
func (a *Agent) stableOrder(tools []tool.Tool) []tool.Tool {
	sorted := true
	for i, t := range tools {
		if _, ok := a.rank[t.Name]; !ok {
			a.rank[t.Name] = len(a.rank)
		}
		sorted = sorted && (i == 0 || a.rank[tools[i-1].Name] < a.rank[t.Name])
	}
	if sorted {
		return tools
	}
	out := slices.Clone(tools)
	slices.SortFunc(out, func(x, y tool.Tool) int { return a.rank[x.Name] - a.rank[y.Name] })
	return out
}

// tools returns the tools the model sees now.
func (a *Agent) tools() ([]tool.Tool, error) {
	if a.opts.Tools != nil {
		return a.opts.Tools()
	}
	return a.opts.Registry.List(), nil
}

func (a *Agent) delta(d Delta) {
	switch {
	case d.Reasoning != "":
		a.emit(Event{Type: EventReasoning, Text: d.Reasoning})
	case d.Text != "":
		a.emit(Event{Type: EventText, Text: d.Text})
	}
}

// emit reports ev; calls run concurrently, so emit serializes.
func (a *Agent) emit(ev Event) {
	if a.opts.Events == nil {
		return
	}
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	a.opts.Events(ev)
}

func (a *Agent) now() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return time.Now()
}

// args is a call's arguments as JSON: "{}" for none.
func args(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}
