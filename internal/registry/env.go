package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
)

// requestTimeout bounds one request to the registry.
const requestTimeout = 30 * time.Second

// FromEnv is the client of the registry getenv names ($MCPBRIDGE_REGISTRY_URL,
// else the official one), its answers kept under the user cache
// directory ($XDG_CACHE_HOME, else ~/.cache; nothing kept when neither is
// known). A URL that is not https (http only on this machine) is
// refused, saying what to write: the registry's answers say what runs
// here, and anyone on the path of plain http could rewrite them.
func FromEnv(getenv func(string) string) (*Client, error) {
	base := getenv(EnvURL)
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s=%q: want the registry's http(s) base URL, like %s", EnvURL, base, DefaultURL)
		}
		if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
			return nil, fmt.Errorf("%s=%q: the registry's answers say what runs on this machine, and anyone on the path of plain http could change them: use https (http only for a registry on this machine)", EnvURL, base)
		}
	}
	c := &Client{BaseURL: base, HTTP: &http.Client{Timeout: requestTimeout}, UserAgent: "mcpbridge"}
	if dir := cacheDir(getenv); dir != "" {
		c.Cache = &Cache{Dir: filepath.Join(dir, "mcpbridge", "registry")}
	}
	return c, nil
}

// cacheDir is the user cache directory: $XDG_CACHE_HOME, else ~/.cache;
// "" when neither is known.
func cacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache")
	}
	return ""
}

// IsFile tells a server.json's path from a registry name, which never
// starts with "." or "/" and always has a "/" (io.github.owner/server):
// a name ending in ".json" is a file unless it has that form and no such
// file is there (so a mistyped file name is said to be missing, not
// looked up in the registry).
func IsFile(ref string) bool {
	if strings.HasPrefix(ref, ".") || filepath.IsAbs(ref) {
		return true
	}
	if !strings.HasSuffix(ref, ".json") {
		return false
	}
	_, err := os.Stat(ref)
	return !strings.Contains(ref, "/") || !errors.Is(err, fs.ErrNotExist)
}

// ReadFile reads the server.json at path, as the registry would answer
// it.
func ReadFile(path string) (Response, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Response{}, err
	}
	s, err := ParseServer(data, path)
	if err != nil {
		return Response{}, err
	}
	return Response{Server: s}, nil
}

// Outdated is one entry's recorded version beside the registry's latest
// (registry outdated --json).
type Outdated struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Latest   string `json:"latest,omitempty"`
	Outdated bool   `json:"outdated"`
	Error    string `json:"error,omitempty"`
}

// Check asks c for the latest version of o's server and says whether o's
// is older; the registry's error, when it has no answer, is in o.Error.
func (c *Client) Check(ctx context.Context, o Outdated) Outdated {
	resp, err := c.Get(ctx, o.Name, "latest")
	if err != nil {
		o.Error = err.Error()
		return o
	}
	o.Latest = resp.Server.Version
	o.Outdated = o.Latest != o.Version
	return o
}
