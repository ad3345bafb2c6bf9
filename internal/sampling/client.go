//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577) but servers of 2025-11-25 use it.

package sampling

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResponseBytes bounds a chat-completions answer read into memory.
const maxResponseBytes = 16 << 20

// maxErrorChars bounds the API's error message quoted in an error.
const maxErrorChars = 300

// client sends sampling requests to one configured endpoint.
type client struct {
	cfg    Config
	lookup func(string) (string, bool)
	http   *http.Client
	log    *slog.Logger
}

// sample answers one sampling/createMessage request (its params as sent)
// from server, logging it with the server's name.
func (c *client) sample(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.CreateMessageWithToolsParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("invalid sampling request: %w", err)
	}
	req, err := toChat(&p, c.cfg.Model, c.cfg.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("sampling request of server %q: %w", server, err)
	}
	log := c.log.With("server", server, "model", c.cfg.Model, "endpoint", c.cfg.BaseURLWritten)
	log.Info("sampling request", "messages", len(req.Messages), "tools", len(req.Tools), "maxTokens", req.MaxTokens)
	start := time.Now()
	resp, err := c.post(ctx, req)
	if err != nil {
		log.Warn("sampling failed", "err", err, "duration", time.Since(start))
		return nil, err
	}
	res, err := fromChat(resp, c.cfg.Model)
	if err != nil {
		log.Warn("sampling failed", "err", err, "duration", time.Since(start))
		return nil, fmt.Errorf("%s: %w", c.cfg.where(), err)
	}
	log.Info("sampling answered", "stopReason", res.StopReason, "promptTokens", resp.Usage.PromptTokens,
		"completionTokens", resp.Usage.CompletionTokens, "duration", time.Since(start))
	return json.Marshal(res)
}

// post sends req and decodes the answer. Errors name the endpoint as
// written and never carry the key.
func (c *client) post(ctx context.Context, req *chatRequest) (*chatResponse, error) {
	key, _ := c.lookup(c.cfg.APIKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("sampling is configured but the API key variable %s is not set", c.cfg.APIKeyEnv)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.cfg.where(), err) // untested: the URL was checked by Decode
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+key)
	hresp, err := c.http.Do(hreq)
	if err != nil {
		// A *url.Error quotes the expanded URL: say where as written.
		var cause error = err
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			cause = ue.Err
		}
		return nil, fmt.Errorf("%s: %s", c.cfg.where(), c.cfg.hideHost(redact(cause.Error(), key)))
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %s", c.cfg.where(), redact(err.Error(), key))
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("%s: the answer is over %d MiB", c.cfg.where(), maxResponseBytes>>20)
	}
	if hresp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s answered %s: %s", c.cfg.where(), hresp.Status, redact(apiError(data), key))
	}
	var resp chatResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("%s: the answer is not a chat completion: %w", c.cfg.where(), err)
	}
	return &resp, nil
}

// apiError is the message of an API's error body ({"error":{"message":…}}
// as OpenAI and DeepSeek send), else the body's start.
func apiError(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	if r := []rune(msg); len(r) > maxErrorChars {
		msg = string(r[:maxErrorChars]) + "…"
	}
	return msg
}

// redact removes the key from text that came from elsewhere (an API may
// echo what it was sent).
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
