//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577) but servers of 2025-11-25 use it.

package sampling

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
)

// client sends sampling requests to one configured endpoint.
type client struct {
	cfg    Config
	api    *chatapi.Client
	lookup func(string) (string, bool)
	log    *slog.Logger
}

// sample answers one sampling/createMessage request (its params as sent)
// from server, logging it with the server's name.
func (c *client) sample(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.CreateMessageWithToolsParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("invalid sampling request: %w", err)
	}
	if key, _ := c.lookup(c.cfg.APIKeyEnv); key == "" && c.cfg.APIKeyEnv != "" {
		return nil, fmt.Errorf("sampling is configured but the API key variable %s is not set", c.cfg.APIKeyEnv)
	}
	req, err := toChat(&p, c.cfg.Model, c.cfg.MaxTokens)
	if err != nil {
		return nil, fmt.Errorf("sampling request of server %q: %w", server, err)
	}
	log := c.log.With("server", server, "model", c.cfg.Model, "endpoint", chatapi.Endpoint(c.cfg.BaseURLWritten))
	log.Info("sampling request", "messages", len(req.Messages), "tools", len(req.Tools), "maxTokens", req.MaxTokens)
	start := time.Now()
	resp, err := c.api.Do(ctx, req)
	if err != nil {
		log.Warn("sampling failed", "err", err, "duration", time.Since(start))
		return nil, err
	}
	res, err := fromChat(resp, c.cfg.Model)
	if err != nil {
		log.Warn("sampling failed", "err", err, "duration", time.Since(start))
		return nil, fmt.Errorf("%s: %w", c.api.Where(), err)
	}
	log.Info("sampling answered", "stopReason", res.StopReason, "promptTokens", resp.Usage.PromptTokens,
		"completionTokens", resp.Usage.CompletionTokens, "duration", time.Since(start))
	return json.Marshal(res)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
