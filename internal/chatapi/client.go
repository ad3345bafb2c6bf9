package chatapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/httpurl"
	urlredact "github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// maxResponseBytes bounds an answer read into memory, and one event of a
// stream.
const maxResponseBytes = 16 << 20

// maxErrorBytes bounds the API's error message quoted in an error.
const maxErrorBytes = 2000

// Retry defaults: attempts in all, the first wait (doubled each time) and
// the longest wait, also for a Retry-After.
const (
	DefaultAttempts = 4
	firstBackoff    = time.Second
	maxBackoff      = 60 * time.Second
)

// Client sends requests to one endpoint. Its fields are set before the
// first request and not changed after; it is safe for concurrent use.
type Client struct {
	// BaseURL is the API's base: requests go to BaseURL/chat/completions.
	// It must be an absolute http(s) URL (CheckBaseURL).
	BaseURL string
	// BaseURLWritten is BaseURL as the config wrote it, before ${VAR}
	// expansion, for messages; "" means BaseURL.
	BaseURLWritten string
	// Model names the model in messages (each Request carries its own).
	Model string
	// APIKeyEnv names the variable holding the key, read by Lookup at each
	// request; "" means the endpoint takes no key (a local model): no
	// Authorization header is sent.
	APIKeyEnv string
	Lookup    func(string) (string, bool)
	// Timeout bounds one attempt; 0: none (a stream can be long).
	Timeout time.Duration
	// Attempts is how many times a request is sent at most (429, 5xx);
	// 0: DefaultAttempts.
	Attempts int
	// HTTP sends the requests; nil: http.DefaultClient.
	HTTP *http.Client
	// Sleep waits between attempts; nil: a timer. Tests pass their own.
	Sleep func(ctx context.Context, d time.Duration) error
	// Log receives a line per retry; nil: none.
	Log *slog.Logger
	// Retrying, when set, is told of each retry before its wait: the
	// attempt that failed (from 1), the attempts in all, the wait and why,
	// so that a person waiting on a busy API is told what happens.
	Retrying func(attempt, attempts int, wait time.Duration, err error)

	tools atomic.Pointer[encodedTools] // the last tools sent, encoded
}

// APIError is an answer with a status other than 2xx: the API's own
// message, as it wrote it.
type APIError struct {
	Where      string // the endpoint as written, and the model
	StatusCode int
	Status     string
	Message    string
	// Hint says what to look at, when mcpbridge knows more than the
	// API said (which key a 401 refused); "" when nothing.
	Hint string
}

func (e *APIError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s answered %s: %s (%s)", e.Where, e.Status, e.Message, e.Hint)
	}
	return fmt.Sprintf("%s answered %s: %s", e.Where, e.Status, e.Message)
}

// contextTooLong reports whether the API refused a conversation longer
// than the model's context window: DeepSeek's and OpenAI's 400 "This
// model's maximum context length is N tokens".
func (e *APIError) contextTooLong() bool {
	return e.StatusCode == http.StatusBadRequest && strings.Contains(e.Message, "maximum context length")
}

// ContextTooLong reports whether err is the API's refusal of a
// conversation longer than the model's context window: every later
// request of the same conversation fails alike, since it only grows.
func ContextTooLong(err error) bool {
	e, ok := errors.AsType[*APIError](err)
	return ok && e.contextTooLong()
}

// CheckBaseURL says what is wrong with an API base URL, without quoting
// it (it may come from a variable); "" when nothing is.
func CheckBaseURL(s string) string {
	if why := httpurl.Problem(s); why != "" {
		return "must be an absolute http(s) URL (" + why + ")"
	}
	if u, _ := url.Parse(s); u.User != nil {
		return "must not hold credentials: name the key's variable in apiKeyEnv"
	}
	return ""
}

// IsDeepSeek reports whether base is DeepSeek's own API, whose rules
// (beta endpoint for strict calls) mcpbridge follows.
func IsDeepSeek(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.deepseek.com"
}

// InClear reports whether requests to base travel unencrypted across a
// network: http:// to a host other than this machine (localhost or a
// loopback address), where anyone on the path reads the key and the
// conversation.
func InClear(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Scheme == "http" && OffMachine(base)
}

// OffMachine reports whether the endpoint base is on another machine: not
// localhost or a loopback address.
func OffMachine(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return true
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !ip.IsLoopback()
}

// Beta returns c sending to DeepSeek's beta endpoint (strict function
// calling); for another API, c itself.
func (c *Client) Beta() *Client {
	if !IsDeepSeek(c.BaseURL) {
		return c
	}
	u, _ := url.Parse(c.BaseURL)
	u.Path = "/" + BetaPath
	return &Client{
		BaseURL: u.String(), BaseURLWritten: strings.TrimSuffix(c.where0(), "/") + "/" + BetaPath,
		Model: c.Model, APIKeyEnv: c.APIKeyEnv, Lookup: c.Lookup, Timeout: c.Timeout, Attempts: c.Attempts,
		HTTP: c.HTTP, Sleep: c.Sleep, Log: c.Log, Retrying: c.Retrying,
	}
}

func (c *Client) where0() string {
	if c.BaseURLWritten != "" {
		return c.BaseURLWritten
	}
	return c.BaseURL
}

// Where names the API in messages: the base URL as written (Endpoint),
// and the model.
func (c *Client) Where() string { return fmt.Sprintf("%s (%s)", Endpoint(c.where0()), c.Model) }

// Endpoint is a base URL as messages and logs show it: one with user
// info, a query or a fragment, where a user may have put a key, cut to
// its scheme and host (redact.URLs); any other whole, its path telling
// /v1 from /beta.
func Endpoint(base string) string {
	if !strings.ContainsAny(base, "@?#") {
		return base
	}
	return urlredact.URLs(base)
}

// Do sends req and returns the whole answer.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	r := *req
	r.Stream, r.StreamOpts = false, nil
	var resp Response
	err := c.send(ctx, &r, func(body io.Reader) error {
		data, err := io.ReadAll(io.LimitReader(body, maxResponseBytes+1))
		if err != nil {
			return fmt.Errorf("reading the answer: %w", err)
		}
		if len(data) > maxResponseBytes {
			return fmt.Errorf("the answer is over %d MiB", maxResponseBytes>>20)
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return fmt.Errorf("the answer is not a chat completion: %w", err)
		}
		return nil
	})
	return &resp, err
}

// Stream sends req as a stream, reports each piece to on as it arrives
// (on may be nil), and returns the answer put together.
func (c *Client) Stream(ctx context.Context, req *Request, on func(Delta)) (*Completion, error) {
	r := *req
	r.Stream, r.StreamOpts = true, &StreamOptions{IncludeUsage: true}
	var out *Completion
	err := c.send(ctx, &r, func(body io.Reader) error {
		var err error
		out, err = readStream(body, on)
		return err
	})
	return out, err
}

// send posts req, retrying on 429 and 5xx (retryable), and hands a 2xx
// body to read.
// Errors say where as written and never carry the key.
func (c *Client) send(ctx context.Context, req *Request, read func(io.Reader) error) error {
	key, _ := c.lookup(c.APIKeyEnv)
	if key == "" && c.APIKeyEnv != "" {
		return fmt.Errorf("%s: the API key variable %s is not set", c.Where(), c.APIKeyEnv)
	}
	// A header cannot carry it: net/http's refusal would name only the
	// Authorization header.
	if strings.ContainsFunc(key, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return fmt.Errorf("%s: the API key in %s holds a line break or another control character: set the variable to the key alone", c.Where(), c.APIKeyEnv)
	}
	body, err := c.Encode(req)
	if err != nil {
		return err
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	for i := 1; ; i++ {
		wait, err := c.attempt(ctx, body, key, read)
		if wait < 0 || i == attempts {
			return err
		}
		if wait == 0 {
			wait = min(firstBackoff<<(i-1), maxBackoff)
		}
		if c.Log != nil {
			c.Log.Warn("chat API busy, retrying", "endpoint", Endpoint(c.where0()), "attempt", i, "wait", wait, "err", err)
		}
		if c.Retrying != nil {
			c.Retrying(i, attempts, wait, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// attempt sends body once. wait is negative when the error is final, else
// how long to wait before the next attempt (0: the backoff decides).
func (c *Client) attempt(ctx context.Context, body []byte, key string, read func(io.Reader) error) (wait time.Duration, err error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("%s: %w", c.Where(), err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.http().Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return -1, c.ended(ctx)
		}
		// A *url.Error quotes the expanded URL: say where as written.
		var cause error = err
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			cause = ue.Err
		}
		return -1, fmt.Errorf("%s: %s", c.Where(), c.hideHost(redact(cause.Error(), key)))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		e := &APIError{Where: c.Where(), StatusCode: resp.StatusCode, Status: resp.Status, Message: redact(apiMessage(data), key)}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			e.Hint = c.keyHint()
		case e.contextTooLong():
			// How to go on is the caller's to say: it knows its commands.
			e.Hint = "the conversation is longer than the model's context window"
		}
		if loc, err := resp.Location(); err == nil {
			e.Hint = fmt.Sprintf("a redirect to %s, which is not followed: if that is the endpoint, name it in the model entry's baseURL", urlredact.URLs(loc.String()))
		}
		if retryable(resp.StatusCode) {
			return retryAfter(resp.Header.Get("Retry-After"), time.Now()), e
		}
		return -1, e
	}
	if err := read(resp.Body); err != nil {
		if ctx.Err() != nil {
			return -1, c.ended(ctx)
		}
		return -1, fmt.Errorf("%s: %s", c.Where(), redact(err.Error(), key))
	}
	return -1, nil
}

// keyHint says where the key an API refused came from: the API's own
// message does not know.
func (c *Client) keyHint() string {
	if c.APIKeyEnv == "" {
		return "no key was sent: name the variable that holds one in the model entry's apiKeyEnv"
	}
	return "the key sent is the value of " + c.APIKeyEnv
}

// ended is the error of an answer cut off by ctx: the caller's
// cancellation as it is, or the attempt's Timeout said with where.
func (c *Client) ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.Timeout > 0 {
		return fmt.Errorf("%s: the answer did not end within the timeout of %v: %w", c.Where(), c.Timeout, ctx.Err())
	}
	return ctx.Err()
}

// encodedTools is a tools array and its JSON.
type encodedTools struct {
	tools []Tool
	json  []byte
}

// Encode returns the body sent for req. Its tools are encoded once for as long as
// they stay the same: an agent sends the same hundreds of schemas at every
// step, and encoding/json checks each byte of each schema again.
func (c *Client) Encode(req *Request) ([]byte, error) {
	if len(req.Tools) == 0 {
		return json.Marshal(req)
	}
	enc := c.tools.Load()
	if enc == nil || !sameTools(enc.tools, req.Tools) {
		b, err := json.Marshal(req.Tools)
		if err != nil {
			return nil, err
		}
		enc = &encodedTools{tools: slices.Clone(req.Tools), json: b}
		c.tools.Store(enc)
	}
	r := *req
	r.Tools = nil
	head, err := json.Marshal(&r)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 0, len(head)+len(enc.json)+10)
	body = append(body, head[:len(head)-1]...)
	body = append(body, `,"tools":`...)
	body = append(body, enc.json...)
	return append(body, '}'), nil
}

func sameTools(a, b []Tool) bool {
	return slices.EqualFunc(a, b, func(x, y Tool) bool {
		return x.Type == y.Type && x.Function.Name == y.Function.Name && x.Function.Description == y.Function.Description &&
			x.Function.Strict == y.Function.Strict && bytes.Equal(x.Function.Parameters, y.Function.Parameters)
	})
}

// retryable reports whether a request answered status is sent again:
// 429 and 5xx, but for the two that refuse the request itself (501: the
// endpoint does not do what was asked; 505), which would fail the same.
func retryable(status int) bool {
	switch status {
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return status == http.StatusTooManyRequests || status >= 500
}

// retryAfter reads a Retry-After header (seconds, or an HTTP date) as a
// wait of at most maxBackoff; 0 when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(h); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxBackoff)
}

func (c *Client) endpoint() string {
	u, _ := url.Parse(c.BaseURL) // checked by CheckBaseURL
	return u.JoinPath("chat", "completions").String()
}

// http is the client that sends, its redirects answered, not followed:
// net/http would send the conversation on to wherever the API says, and
// the key with it to the same host, over http:// too.
func (c *Client) http() *http.Client {
	hc := *http.DefaultClient
	if c.HTTP != nil {
		hc = *c.HTTP
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

func (c *Client) lookup(k string) (string, bool) {
	if c.Lookup == nil || k == "" {
		return "", false
	}
	return c.Lookup(k)
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// hideHost removes the host of an expanded base URL from an error's text
// (a dial error quotes it); a base URL written out is left as it is.
func (c *Client) hideHost(s string) string {
	u, err := url.Parse(c.BaseURL)
	if c.BaseURLWritten == "" || c.BaseURLWritten == c.BaseURL || err != nil || u.Host == "" {
		return s
	}
	return strings.ReplaceAll(s, u.Host, "[host]")
}

// apiMessage is the message of an API's error body ({"error":{"message":…}}
// as OpenAI and DeepSeek send), else the body's start.
func apiMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	return cutMessage(msg)
}

// cutMessage is an API's message cut to be quoted in an error.
func cutMessage(msg string) string { return textcut.Marked(msg, maxErrorBytes, "…") }

// redact removes the key from text that came from elsewhere (an API may
// echo what it was sent).
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
