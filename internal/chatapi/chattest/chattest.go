// Package chattest is a scripted OpenAI-compatible chat-completions server
// on 127.0.0.1 that streams as DeepSeek's API does, for tests: reasoning,
// text and tool-call arguments split across chunks, the usage in the last
// chunk, then "data: [DONE]". Like DeepSeek in thinking mode, it answers
// 400 when an assistant turn that made tool calls comes back without its
// reasoning_content; it can be told to answer 429 (with Retry-After) or
// 500 first.
package chattest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
)

// Key is the API key the server accepts.
const Key = "sk-chattest-0123456789abcdef"

// Call is a tool call of a scripted turn.
type Call struct {
	Name string
	Args string // JSON text
}

// Turn is one scripted answer.
type Turn struct {
	Reasoning string
	Text      string
	Calls     []Call
}

// Fault is an answer given instead of a turn.
type Fault struct {
	Status     int
	RetryAfter string // the Retry-After header, if any
	Message    string
}

// Script picks the answer to a request (its number from 0, its messages).
type Script func(n int, req *chatapi.Request) Turn

// Server is the scripted API. Its methods are safe for concurrent use.
type Server struct {
	URL string
	// Thinking makes the server want reasoning back (DeepSeek's thinking
	// mode) and send reasoning with every turn.
	Thinking bool
	// Keyless makes the server a local endpoint without keys: it answers
	// whatever Authorization a request has (Auths shows what was sent).
	Keyless bool

	srv    *httptest.Server
	script Script
	mu     sync.Mutex
	faults []Fault
	reqs   []*chatapi.Request
	raw    [][]byte
	paths  []string
	auths  []string
	n      int
}

// New starts a server answering with script; it stops with the test.
func New(t testing.TB, script Script) *Server {
	s := &Server{script: script, Thinking: true}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Turns is a Script answering with turns in order (the last one again
// when they run out).
func Turns(turns ...Turn) Script {
	return func(n int, _ *chatapi.Request) Turn { return turns[min(n, len(turns)-1)] }
}

// Fail makes the next requests get faults, in order, before any turn.
func (s *Server) Fail(f ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, f...)
	s.mu.Unlock()
}

// Requests returns the requests that got a turn or a fault, in order.
func (s *Server) Requests() []*chatapi.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*chatapi.Request(nil), s.reqs...)
}

// Raw returns the bodies of the requests as sent.
func (s *Server) Raw() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

// Auths returns the Authorization headers of the requests, in order ("":
// none was sent).
func (s *Server) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

// Paths returns the paths the requests were sent to.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var req chatapi.Request
	if err := json.Unmarshal(data, &req); err != nil {
		apiError(w, 400, "invalid JSON: "+err.Error())
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, &req)
	s.raw = append(s.raw, data)
	s.paths = append(s.paths, r.URL.Path)
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	var fault *Fault
	if len(s.faults) > 0 {
		fault = &s.faults[0]
		s.faults = s.faults[1:]
	}
	n := s.n
	if fault == nil {
		s.n++
	}
	s.mu.Unlock()
	switch {
	case !s.Keyless && r.Header.Get("Authorization") != "Bearer "+Key:
		apiError(w, 401, "Authentication Fails, Your api key is invalid")
	case fault != nil:
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		apiError(w, fault.Status, fault.Message)
	case s.Thinking && missingReasoning(&req):
		apiError(w, 400, "The reasoning_content in the thinking mode must be passed back to the API.")
	case !req.Stream:
		s.whole(w, &req, s.script(n, &req))
	default:
		s.stream(w, &req, s.script(n, &req))
	}
}

// whole answers a request without stream (sampling's) in one body.
func (s *Server) whole(w http.ResponseWriter, req *chatapi.Request, t Turn) {
	msg := map[string]any{"role": "assistant", "content": t.Text}
	var calls []any
	for i, c := range t.Calls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", s.count(), i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
	}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"], finish = calls, "tool_calls"
	}
	if s.Thinking {
		msg["reasoning_content"] = t.Reasoning
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": len(mustJSON(req.Messages)) / 4, "completion_tokens": len(t.Text) / 4}})
}

// missingReasoning reports an assistant turn with tool calls but no
// reasoning, which DeepSeek refuses in thinking mode.
func missingReasoning(req *chatapi.Request) bool {
	for _, m := range req.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == "" {
			return true
		}
	}
	return false
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": "invalid_request_error"}})
	w.Write(b)
}

// stream writes t as DeepSeek does: a role chunk, the reasoning and text
// in pieces of a few characters, each tool call's id and name then its
// arguments in pieces, the finish reason, the usage alone in the last
// chunk, and [DONE].
func (s *Server) stream(w http.ResponseWriter, req *chatapi.Request, t Turn) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil)
	fmt.Fprint(w, ": keep-alive\n\n")
	if s.Thinking {
		reasoning := t.Reasoning
		if reasoning == "" {
			reasoning = "Thinking about it."
		}
		for _, p := range pieces(reasoning) {
			send(map[string]any{"content": nil, "reasoning_content": p}, nil)
		}
	}
	for _, p := range pieces(t.Text) {
		send(map[string]any{"content": p, "reasoning_content": nil}, nil)
	}
	for i, c := range t.Calls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", s.count(), i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(c.Args) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	send(map[string]any{"content": ""}, finish)
	prompt := len(mustJSON(req.Messages))/4 + len(mustJSON(req.Tools))/4
	completion := (len(t.Reasoning) + len(t.Text) + len(mustJSON(t.Calls))) / 4
	b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": prompt}})
	fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
}

func (s *Server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// pieces cuts s into pieces of up to 7 bytes, on rune boundaries.
func pieces(s string) []string {
	var out []string
	for s != "" {
		n := min(7, len(s))
		for n < len(s) && (s[n]&0xC0) == 0x80 {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
