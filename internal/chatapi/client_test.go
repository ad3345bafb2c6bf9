package chatapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

// sleeps records the waits of a client instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return nil
}

func client(url string, s *sleeps) *chatapi.Client {
	return &chatapi.Client{
		BaseURL: url, Model: "m", APIKeyEnv: "K",
		Lookup: func(k string) (string, bool) { return chattest.Key, k == "K" },
		Sleep:  s.sleep,
	}
}

// A stream split as DeepSeek splits it is put together: reasoning apart
// from the text, tool calls in index order with their argument pieces
// joined, the usage of the last chunk; each piece is reported as it comes.
func TestStream(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{
		Reasoning: "Two files to read, héhé.",
		Text:      "Reading both.",
		Calls:     []chattest.Call{{Name: "read", Args: `{"path":"/a/long/path.txt"}`}, {Name: "list", Args: `{}`}},
	}))
	var reasoning, text strings.Builder
	var started []string
	got, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{Model: "m", Messages: []chatapi.Message{{Role: "user", Content: "hi"}}},
		func(d chatapi.Delta) {
			reasoning.WriteString(d.Reasoning)
			text.WriteString(d.Text)
			if d.ToolCall != nil {
				started = append(started, d.ToolCall.Function.Name)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	want := chatapi.Message{Role: "assistant", Content: "Reading both.", ReasoningContent: "Two files to read, héhé.", ToolCalls: []chatapi.ToolCall{
		{ID: "call_1_0", Type: "function", Function: chatapi.FunctionCall{Name: "read", Arguments: `{"path":"/a/long/path.txt"}`}},
		{ID: "call_1_1", Type: "function", Function: chatapi.FunctionCall{Name: "list", Arguments: `{}`}},
	}}
	if d := cmp.Diff(want, got.Message); d != "" {
		t.Errorf("message (-want +got):\n%s", d)
	}
	if got.FinishReason != "tool_calls" || got.Usage.TotalTokens == 0 || got.Model != "m" {
		t.Errorf("completion %+v", got)
	}
	if reasoning.String() != want.ReasoningContent || text.String() != "Reading both." || strings.Join(started, ",") != "read,list" {
		t.Errorf("deltas: %q %q %v", reasoning.String(), text.String(), started)
	}
	req := srv.Requests()[0]
	if !req.Stream || req.StreamOpts == nil || !req.StreamOpts.IncludeUsage || srv.Paths()[0] != "/chat/completions" {
		t.Errorf("request %+v to %s", req, srv.Paths()[0])
	}
}

// 429 and 5xx are retried after the API's Retry-After (seconds or a
// date), else with a doubling backoff; other errors are not, nor a 501
// or 505, which say the request itself is refused; the API's
// message is shown as it wrote it, the key never.
func TestRetries(t *testing.T) {
	ok := chattest.Turns(chattest.Turn{Text: "done"})
	for _, c := range []struct {
		name   string
		faults []chattest.Fault
		waits  []time.Duration
		err    string
	}{
		{"429 with Retry-After", []chattest.Fault{{Status: 429, RetryAfter: "3", Message: "Rate Limit Reached"}}, []time.Duration{3 * time.Second}, ""},
		{"500 once", []chattest.Fault{{Status: 500, Message: "Server Error"}}, []time.Duration{time.Second}, ""},
		{"503 then 429", []chattest.Fault{{Status: 503, Message: "busy"}, {Status: 429, Message: "slow down"}}, []time.Duration{time.Second, 2 * time.Second}, ""},
		{"Retry-After capped", []chattest.Fault{{Status: 429, RetryAfter: "86400", Message: "x"}}, []time.Duration{time.Minute}, ""},
		{"gives up", []chattest.Fault{{Status: 500, Message: "a"}, {Status: 500, Message: "b"}, {Status: 500, Message: "c"}, {Status: 502, Message: "d, key " + chattest.Key}},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, "answered 502 Bad Gateway: d, key [redacted]"},
		{"501 not retried", []chattest.Fault{{Status: 501, Message: "tools are not supported"}}, nil, "answered 501 Not Implemented: tools are not supported"},
		{"505 not retried", []chattest.Fault{{Status: 505, Message: "no"}}, nil, "answered 505 HTTP Version Not Supported: no"},
		{"400 not retried", []chattest.Fault{{Status: 400, Message: "The reasoning_content in the thinking mode must be passed back to the API."}}, nil,
			"(m) answered 400 Bad Request: The reasoning_content in the thinking mode must be passed back to the API."},
		{"context exceeded", []chattest.Fault{{Status: 400, Message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens."}}, nil,
			"you requested 140000 tokens. (the conversation is longer than the model's context window)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := chattest.New(t, ok)
			srv.Fail(c.faults...)
			s := &sleeps{}
			got, err := client(srv.URL, s).Stream(context.Background(), &chatapi.Request{Model: "m"}, nil)
			if c.err != "" {
				var ae *chatapi.APIError
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &ae) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
			} else if err != nil || got.Message.Content != "done" {
				t.Fatalf("%v %+v", err, got)
			}
			if d := cmp.Diff(c.waits, s.d); d != "" {
				t.Errorf("waits (-want +got):\n%s", d)
			}
		})
	}
}

// Do reads a whole answer; a missing key, a stream cut short and an
// unreachable API are clear errors without the key.
func TestErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cut/chat/completions" {
			w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"))
			return
		}
		w.Write([]byte(`{"model":"m","choices":[{"message":{"content":"whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}`))
	}))
	defer srv.Close()
	c := client(srv.URL, &sleeps{})
	resp, err := c.Do(context.Background(), &chatapi.Request{Model: "m"})
	if err != nil || *resp.Choices[0].Message.Content != "whole" || resp.Usage.PromptTokens != 3 {
		t.Fatalf("Do: %v %+v", err, resp)
	}
	if _, err := client(srv.URL+"/cut", &sleeps{}).Stream(context.Background(), &chatapi.Request{}, nil); err == nil || !strings.Contains(err.Error(), "the stream ended before the answer did") {
		t.Errorf("cut stream: %v", err)
	}
	noKey := client(srv.URL, &sleeps{})
	noKey.Lookup = nil
	if _, err := noKey.Do(context.Background(), &chatapi.Request{}); err == nil || !strings.Contains(err.Error(), "the API key variable K is not set") {
		t.Errorf("no key: %v", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	hidden := client(closed.URL, &sleeps{})
	hidden.BaseURLWritten = "${API}"
	_, err = hidden.Do(context.Background(), &chatapi.Request{})
	if err == nil || !strings.Contains(err.Error(), "${API} (m): ") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("unreachable: %v", err)
	}
}

// An answer that stops arriving ends at the attempt's timeout with an
// error that says where and which timeout, not a bare context error.
func TestStreamTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	c := client(srv.URL, &sleeps{})
	c.Timeout = 50 * time.Millisecond
	_, err := c.Stream(context.Background(), &chatapi.Request{}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), srv.URL+" (m): the answer did not end within the timeout of 50ms") {
		t.Errorf("stalled stream: %v", err)
	}
}

// An API that does not even begin its answer ends at the attempt's
// timeout with the same error as a stalled stream, which names the
// timeout; a cancelled request is the caller's cancellation, as it is
// once the answer has begun (both were a bare "context deadline
// exceeded" or "context canceled" text).
func TestNoAnswerTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server sees the client leave once the body is read
		<-r.Context().Done()        // no status line, ever
	}))
	defer srv.Close()
	c := client(srv.URL, &sleeps{})
	c.Timeout = 50 * time.Millisecond
	_, err := c.Stream(context.Background(), &chatapi.Request{}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), srv.URL+" (m): the answer did not end within the timeout of 50ms") {
		t.Errorf("silent API: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := client(srv.URL, &sleeps{}).Stream(ctx, &chatapi.Request{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the answer: %v", err)
	}
}

// An error sent inside a stream is quoted cut, as an error status's
// message is (an error event of megabytes became the turn's error whole).
func TestStreamErrorCut(t *testing.T) {
	long := strings.Repeat("overloaded ", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": long}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}))
	defer srv.Close()
	_, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "the stream ended with an error: overloaded overloaded") || len(err.Error()) > 4000 {
		t.Errorf("error event of %d bytes: %d bytes of error, %.200q", len(long), len(fmt.Sprint(err)), fmt.Sprint(err))
	}
}

// A key read with its line end (a file's last line pasted into the
// variable) fails before anything is sent, naming the variable and what
// is wrong with its value, which is not quoted (net/http's refusal named
// only the Authorization header).
func TestKeyWithLineBreak(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "done"}))
	c := client(srv.URL, &sleeps{})
	c.Lookup = func(string) (string, bool) { return chattest.Key + "\r\n", true }
	_, err := c.Stream(context.Background(), &chatapi.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "the API key in K holds a line break or another control character") || strings.Contains(err.Error(), chattest.Key) {
		t.Errorf("key with a line end: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// An API that refuses the key says so as it wrote it, and the error
// names where the key came from: the variable read, or that none was sent
// (the API's "your api key is invalid" did not say which key).
func TestUnauthorizedNamesTheKey(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "done"}))
	wrong := client(srv.URL, &sleeps{})
	wrong.Lookup = func(string) (string, bool) { return "sk-wrong", true }
	_, err := wrong.Stream(context.Background(), &chatapi.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: Authentication Fails, Your api key is invalid (the key sent is the value of K)") {
		t.Errorf("wrong key: %v", err)
	}
	none := client(srv.URL, &sleeps{})
	none.APIKeyEnv = ""
	_, err = none.Stream(context.Background(), &chatapi.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "(no key was sent: name the variable that holds one in the model entry's apiKeyEnv)") {
		t.Errorf("no key: %v", err)
	}
}

// An event past the bound of one is refused with the bound said (the
// error was bufio's "token too long").
func TestStreamEventTooLong(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", strings.Repeat("a", 17<<20))
	}))
	defer srv.Close()
	_, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "the stream holds a line over 16 MiB") {
		t.Errorf("an event of 17 MiB: %v", err)
	}
}

// A redirect is not followed: the conversation and the key go to the
// endpoint named and nowhere else, and the error says where the API
// wanted them sent (a 307 or 308 sent the whole request on, the key with
// it when the host was the same, over http:// too).
func TestRedirectNotFollowed(t *testing.T) {
	var got []string
	var mu sync.Mutex
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer elsewhere.Close()
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+"/v1/chat/completions", status)
		}))
		_, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{Model: "m"}, nil)
		srv.Close()
		var ae *chatapi.APIError
		if !errors.As(err, &ae) || ae.StatusCode != status || !strings.Contains(err.Error(), "a redirect to "+elsewhere.URL+"/…, which is not followed") {
			t.Errorf("%d: %v", status, err)
		}
	}
	if len(got) != 0 {
		t.Errorf("the redirect's target got %d requests (Authorization %q)", len(got), got)
	}
}

// A key a user put in the base URL (its query, its user info) is sent,
// but not shown: not in an error about the API's answer, nor one about
// an API out of reach, nor in a retry's log line, nor where the API is
// named; a plain path still is.
func TestURLCredentialsNotShown(t *testing.T) {
	const secret = "sk-in-the-url"
	var sent []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.URL.Query().Get("api_key"))
		mu.Unlock()
		http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	var log strings.Builder
	for _, base := range []string{srv.URL + "/v1?api_key=" + secret, closed.URL + "/v1?api_key=" + secret} {
		c := client(base, &sleeps{})
		c.Log = slog.New(slog.NewTextHandler(&log, nil))
		_, err := c.Do(context.Background(), &chatapi.Request{Model: "m"})
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want an error without the key", base, err)
		}
	}
	mu.Lock()
	if len(sent) == 0 || sent[0] != secret {
		t.Errorf("the API was sent api_key %q, want the URL's", sent)
	}
	mu.Unlock()
	if strings.Contains(log.String(), secret) || !strings.Contains(log.String(), "retrying") {
		t.Errorf("log of the retries: %q, want them without the key", log.String())
	}
	for base, want := range map[string]string{
		"https://api.example.com/v1?api_key=" + secret: "https://api.example.com/… (m)",
		"https://me:" + secret + "@api.example.com/v1": "https://api.example.com/… (m)",
		"https://api.example.com/v1#" + secret:         "https://api.example.com/… (m)",
		"https://api.example.com/v1":                   "https://api.example.com/v1 (m)",
	} {
		if got := (&chatapi.Client{BaseURL: base, Model: "m"}).Where(); got != want {
			t.Errorf("Where of %s: %q, want %q", base, got, want)
		}
		if got := (&chatapi.Client{BaseURL: "https://api.example.com", BaseURLWritten: base, Model: "m"}).Where(); got != want {
			t.Errorf("Where of %s as written: %q, want %q", base, got, want)
		}
	}
}

// Strict calls go to DeepSeek's beta endpoint; other APIs keep theirs.
func TestBeta(t *testing.T) {
	c := &chatapi.Client{BaseURL: "https://api.deepseek.com", Model: "m"}
	if b := c.Beta(); b.BaseURL != "https://api.deepseek.com/beta" || b.Where() != "https://api.deepseek.com/beta (m)" {
		t.Errorf("beta %q %q", b.BaseURL, b.Where())
	}
	if o := (&chatapi.Client{BaseURL: "https://api.openai.com/v1"}); o.Beta() != o {
		t.Error("another API was sent to a beta endpoint")
	}
}

// The scripted API refuses, as DeepSeek does in thinking mode, a
// tool-call turn sent back without its reasoning: the loop's tests
// passing against it proves the loop sends the reasoning back.
func TestScriptedAPIWantsReasoning(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	msgs := []chatapi.Message{{Role: "user", Content: "hi"}, {Role: "assistant", ToolCalls: []chatapi.ToolCall{{ID: "1", Type: "function", Function: chatapi.FunctionCall{Name: "f", Arguments: "{}"}}}}, {Role: "tool", ToolCallID: "1", Content: "x"}}
	_, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{Model: "m", Messages: msgs}, nil)
	if err == nil || !strings.Contains(err.Error(), "answered 400 Bad Request: The reasoning_content in the thinking mode must be passed back to the API.") {
		t.Errorf("without reasoning: %v", err)
	}
	msgs[1].ReasoningContent = "because"
	if _, err := client(srv.URL, &sleeps{}).Stream(context.Background(), &chatapi.Request{Model: "m", Messages: msgs}, nil); err != nil {
		t.Errorf("with reasoning: %v", err)
	}
}

// A request's body is the request's JSON, its tools encoded once while
// they stay the same and again when they change.
func TestEncode(t *testing.T) {
	c := &chatapi.Client{}
	tools := []chatapi.Tool{{Type: "function", Function: chatapi.Function{Name: "a", Parameters: json.RawMessage(`{ "type" : "object" }`)}}}
	req := &chatapi.Request{Model: "m", Messages: []chatapi.Message{{Role: "user", Content: "hi"}}, Tools: tools}
	for i, change := range []func(){func() {}, func() {}, func() { tools[0].Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`) }} {
		change()
		got, err := c.Encode(req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(req)
		if !json.Valid(got) || string(got) != string(want) {
			t.Errorf("%d: body\n%s\nwant\n%s", i, got, want)
		}
	}
}

// A client without a key variable talks to an endpoint that takes no
// key: it sends no Authorization header and needs no key set. A client
// with one still refuses to send without the key.
func TestKeyless(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "local"}))
	srv.Keyless = true
	c := &chatapi.Client{BaseURL: srv.URL, Model: "m", Lookup: func(string) (string, bool) { return "ignored", true }}
	got, err := c.Stream(context.Background(), &chatapi.Request{Model: "m", Messages: []chatapi.Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil || got.Message.Content != "local" {
		t.Fatalf("keyless: %+v, %v", got, err)
	}
	if auths := srv.Auths(); len(auths) != 1 || auths[0] != "" {
		t.Errorf("Authorization sent: %q", auths)
	}
	c.APIKeyEnv = "UNSET_KEY"
	c.Lookup = func(string) (string, bool) { return "", false }
	if _, err := c.Stream(context.Background(), &chatapi.Request{Model: "m"}, nil); err == nil || !strings.Contains(err.Error(), "the API key variable UNSET_KEY is not set") {
		t.Errorf("an unset key: %v", err)
	}
	if n := len(srv.Auths()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// The key travels in clear over http:// to another machine; https://
// and this machine are safe.
func TestInClear(t *testing.T) {
	for base, want := range map[string]bool{
		"http://model.example/v1":   true,
		"http://10.0.0.7:11434/v1":  true,
		"http://[fe80::1]:8080":     true,
		"http://localhost:11434/v1": false,
		"http://LocalHost:1":        false,
		"http://127.0.0.1:8080":     false,
		"http://127.9.9.9":          false,
		"http://[::1]:8080/v1":      false,
		"https://model.example/v1":  false,
		"https://api.deepseek.com":  false,
	} {
		if got := chatapi.InClear(base); got != want {
			t.Errorf("InClear(%q) = %v, want %v", base, got, want)
		}
	}
}
