// Package sampling answers MCP servers' sampling/createMessage requests
// with an OpenAI-compatible chat-completions endpoint (DeepSeek's API by
// default), for the one-shot commands of mcpbridge: a `name: sampling`
// entry of the config file (one per file) configures it, and only servers
// whose entry says allowSampling: true are offered it. Every request is
// logged with the server that made it; the API key, read from a named
// environment variable when a request is made, is never logged, shown or
// put in an error.
package sampling

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// KindName selects the kind in a config file entry (`name: sampling`).
const KindName = "sampling"

// Defaults of a sampling entry: DeepSeek's API.
const (
	DefaultBaseURL   = "https://api.deepseek.com"
	DefaultModel     = "deepseek-chat"
	DefaultAPIKeyEnv = "DEEPSEEK_API_KEY"
	DefaultTimeout   = 120 * time.Second
)

// Config is a sampling entry's config, defaults filled in.
type Config struct {
	// BaseURL (baseURL) is the API's base: requests go to
	// BaseURL + "/chat/completions".
	BaseURL string `json:"baseURL"`
	// Model (model) answers every request, whatever model the server
	// prefers (its modelPreferences are hints).
	Model string `json:"model"`
	// APIKeyEnv (apiKeyEnv) names the environment variable holding the
	// API key, sent as a bearer token; read at each request.
	APIKeyEnv string `json:"apiKeyEnv"`
	// MaxTokens (maxTokens) caps a request's maxTokens; 0: the server's.
	MaxTokens int64 `json:"maxTokens"`
	// Timeout (timeoutMs) bounds one request to the API.
	Timeout time.Duration `json:"timeoutMs"`
	// BaseURLWritten is baseURL as written, for messages when ${VAR}
	// expansion changed it (the expanded value may hold a secret).
	BaseURLWritten string `json:"-"`
}

func yamlKeys() []string { return []string{"baseURL", "model", "apiKeyEnv", "maxTokens", "timeoutMs"} }

// Decode strictly decodes a sampling entry's config (none at all means
// every default), expanding ${VAR} in baseURL and model.
func Decode(n *yaml.Node, lookup func(string) (string, bool)) (Config, error) {
	c := Config{BaseURL: DefaultBaseURL, Model: DefaultModel, APIKeyEnv: DefaultAPIKeyEnv, Timeout: DefaultTimeout}
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		c.BaseURLWritten = c.BaseURL
		return c, d.Err()
	}
	m.Reject(yamlKeys()...)
	if v, ok := m.ExpandString("baseURL"); ok && v != "" {
		c.BaseURL = v
		if problem := checkBaseURL(v); problem != "" {
			m.Errorf("baseURL", "%s", problem)
		}
	}
	c.BaseURLWritten = c.BaseURL
	if w, ok := m.String("baseURL"); ok && w != "" {
		c.BaseURLWritten = w
	}
	if v, ok := m.ExpandString("model"); ok && v != "" {
		c.Model = v
	}
	if v, ok := m.String("apiKeyEnv"); ok {
		c.APIKeyEnv = v
		if !isEnvName(v) {
			m.Errorf("apiKeyEnv", "must name an environment variable ([A-Za-z_][A-Za-z0-9_]*), got %q", v)
		}
	}
	if v, ok := m.Int("maxTokens", 1, 1<<31-1); ok {
		c.MaxTokens = v
	}
	if v, ok := m.Int("timeoutMs", 1, 1<<31-1); ok {
		c.Timeout = time.Duration(v) * time.Millisecond
	}
	return c, d.Err()
}

// checkBaseURL says what is wrong with an API base URL, without quoting
// it (it may come from a variable); "" when nothing is.
func checkBaseURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "must be an absolute http(s) URL (it does not parse as a URL)"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an absolute http(s) URL (the scheme is not http or https)"
	case u.Host == "":
		return "must be an absolute http(s) URL (it has no host)"
	case u.User != nil:
		return "must not hold credentials: name the key's variable in apiKeyEnv"
	}
	return ""
}

func isEnvName(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// endpoint is the chat-completions URL of c.
func (c Config) endpoint() string {
	u, _ := url.Parse(c.BaseURL) // checked by Decode
	return u.JoinPath("chat", "completions").String()
}

// where names the API in messages: baseURL as written.
func (c Config) where() string { return fmt.Sprintf("%s (%s)", c.BaseURLWritten, c.Model) }

// hideHost removes the host of an expanded baseURL from an error's text
// (a dial error quotes it); a baseURL written out is left as it is.
func (c Config) hideHost(s string) string {
	u, err := url.Parse(c.BaseURL)
	if c.BaseURLWritten == c.BaseURL || err != nil || u.Host == "" {
		return s
	}
	return strings.ReplaceAll(s, u.Host, "[host]")
}
