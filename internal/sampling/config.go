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
	"log/slog"
	"net/http"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Kind names: the older `name: sampling` entry, and the `name: model`
// entry that configures the agent's model too (docs/config.md).
const (
	KindName  = "sampling"
	ModelKind = "model"
)

// Defaults of an entry: DeepSeek's API (package chatapi says which model
// and why). A model entry waits longer, since the agent streams whole
// answers with their reasoning.
const (
	DefaultBaseURL      = chatapi.DefaultBaseURL
	DefaultModel        = chatapi.DefaultModel
	DefaultAPIKeyEnv    = chatapi.DefaultAPIKeyEnv
	DefaultTimeout      = 120 * time.Second
	DefaultModelTimeout = 600 * time.Second
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
	// API key, sent as a bearer token; read at each request. "" (written
	// apiKeyEnv: "" or apiKey: none) means the endpoint takes no key:
	// none is required and no Authorization header is sent.
	APIKeyEnv string `json:"apiKeyEnv"`
	// APIKeyEnvNamed reports that the entry wrote apiKeyEnv or apiKey:
	// APIKeyEnv is the user's choice, not DeepSeek's default.
	APIKeyEnvNamed bool `json:"-"`
	// MaxTokens (maxTokens) caps a request's maxTokens; 0: the server's.
	MaxTokens int64 `json:"maxTokens"`
	// Timeout (timeoutMs) bounds one request to the API.
	Timeout time.Duration `json:"timeoutMs"`
	// Strict (strict, model entries only) asks the agent for strict
	// function calling where the tools' schemas allow it.
	Strict bool `json:"strict"`
	// BaseURLWritten is baseURL as written, for messages when ${VAR}
	// expansion changed it (the expanded value may hold a secret).
	BaseURLWritten string `json:"-"`
}

// CredentialVars are the variables c names as holding a credential: its
// API key's. No child inherits it unless its own env passes it.
func (c Config) CredentialVars() []string {
	if c.APIKeyEnv == "" {
		return nil
	}
	return []string{c.APIKeyEnv}
}

// CredentialRefs are the variables an entry's config as written (n,
// which need not be valid) names as holding a credential: the one its
// apiKeyEnv names, and those of its baseURL's query (a proxy's
// ?key=${KEY}), sent with every request as the key is.
func CredentialRefs(n *yaml.Node) []string {
	names := yamlconf.NamedVars(yamlconf.Child(n, "apiKeyEnv"))
	if u := yamlconf.Child(n, "baseURL"); u != nil && u.Kind == yaml.ScalarNode {
		names = append(names, yamlconf.URLCredentialRefs(u.Value)...)
	}
	return names
}

func yamlKeys(kind string) []string {
	keys := []string{"baseURL", "model", "apiKeyEnv", "apiKey", "maxTokens", "timeoutMs"}
	if kind == ModelKind {
		keys = append(keys, "strict")
	}
	return keys
}

// Decode strictly decodes the config of a sampling entry (kind KindName)
// or a model entry (ModelKind); none at all means every default. ${VAR}
// is expanded in baseURL and model.
//
// Every mistake is an error at its position, never a default quietly in
// its place: the endpoint decides where conversations and the key go.
func Decode(n *yaml.Node, lookup func(string) (string, bool), kind string) (Config, error) {
	c := Config{BaseURL: DefaultBaseURL, Model: DefaultModel, APIKeyEnv: DefaultAPIKeyEnv, Timeout: DefaultTimeout}
	if kind == ModelKind {
		c.Timeout = DefaultModelTimeout
	}
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		c.BaseURLWritten = c.BaseURL
		return c, d.Err()
	}
	m.Reject(yamlKeys(kind)...)
	if v, ok := m.ExpandString("baseURL"); ok {
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
	c.APIKeyEnv = decodeKey(m, c.APIKeyEnv)
	c.APIKeyEnvNamed = m.Has("apiKeyEnv") || m.Has("apiKey")
	if v, ok := m.Int("maxTokens", 1, 1<<31-1); ok {
		c.MaxTokens = v
	}
	if v, ok := m.Int("timeoutMs", 1, 1<<31-1); ok {
		c.Timeout = time.Duration(v) * time.Millisecond
	}
	c.Strict, _ = m.Bool("strict")
	return c, d.Err()
}

// checkBaseURL says what is wrong with baseURL's value; an empty one
// (a variable set to "") is refused rather than taken for the default.
func checkBaseURL(v string) string {
	if v == "" {
		return "is empty (after ${VAR} expansion, if it has one): name the endpoint, or leave baseURL out for DeepSeek's API"
	}
	return chatapi.CheckBaseURL(v)
}

// noKey is apiKey's one value: the endpoint takes no key.
const noKey = "none"

// decodeKey reads apiKeyEnv and apiKey (only `none`), returning the key's
// variable: def when neither is written, "" when the endpoint takes no
// key. A keyless entry must name its baseURL: the default, DeepSeek's
// API, needs a key, and an entry meant for a local model that forgot its
// baseURL would otherwise send the conversation there.
func decodeKey(m *yamlconf.Map, def string) string {
	env, hasEnv := m.String("apiKeyEnv")
	if hasEnv && env != "" && !yamlconf.IsVarName(env) {
		m.Errorf("apiKeyEnv", `must name an environment variable ([A-Za-z_][A-Za-z0-9_]*), or be "" for an endpoint that takes no key; got %q`, env)
	}
	if v, ok := m.String("apiKey"); ok {
		switch {
		case v != noKey:
			m.Errorf("apiKey", `takes only "none" (the endpoint takes no key): a key is never written in the file; name the variable that holds it in apiKeyEnv`)
		case hasEnv && env != "":
			m.Errorf("apiKey", "none says the endpoint takes no key, but apiKeyEnv names %s: keep one of them", env)
		default:
			hasEnv, env = true, ""
		}
	}
	if !hasEnv {
		return def
	}
	if env == "" && !m.Has("baseURL") {
		key := "apiKeyEnv"
		if m.Has("apiKey") {
			key = "apiKey"
		}
		m.Errorf(key, "no key needs a baseURL too: without one the requests go to DeepSeek's API (%s), which needs a key", DefaultBaseURL)
	}
	return env
}

// Client returns the chat-completions client of c: its key read with
// lookup at each request, sent with hc (nil: http.DefaultClient), retries
// logged to log (nil: not logged).
func (c Config) Client(lookup func(string) (string, bool), hc *http.Client, log *slog.Logger) *chatapi.Client {
	return &chatapi.Client{
		BaseURL: c.BaseURL, BaseURLWritten: c.BaseURLWritten, Model: c.Model,
		APIKeyEnv: c.APIKeyEnv, Lookup: lookup, Timeout: c.Timeout, HTTP: hc, Log: log,
	}
}
