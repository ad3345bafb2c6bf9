package registry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DefaultURL is the official MCP Registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// EnvURL is the environment variable that names another registry.
const EnvURL = "MCPBRIDGE_REGISTRY_URL"

// apiPath is the registry API version read: the stable one.
const apiPath = "/v0.1"

// maxBody bounds one answer: the largest list page is far smaller.
const maxBody = 8 << 20

// maxPages bounds a search that follows cursors (docs/decisions.md §8:
// pagination is bounded).
const maxPages = 1000

// maxCursorBytes bounds a cursor a search follows: the registry's are
// short, and each is kept (to see one come back) and sent in a URL.
const maxCursorBytes = 4 << 10

// Response is one server version as the registry serves it: the
// server.json and the registry's own metadata.
type Response struct {
	Server Server `json:"server"`
	Meta   Meta   `json:"_meta"`
}

// Meta is the registry-managed metadata of a server version.
type Meta struct {
	Official *Official `json:"io.modelcontextprotocol.registry/official,omitempty"`
}

// Official is what the official registry records of a version.
type Official struct {
	Status        string `json:"status,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PublishedAt   string `json:"publishedAt,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
	IsLatest      bool   `json:"isLatest,omitempty"`
}

// List is one page of GET /v0.1/servers.
type List struct {
	Servers  []Response `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor,omitempty"`
		Count      int    `json:"count,omitempty"`
	} `json:"metadata"`
}

// Client reads a registry. Its zero value reads the official registry
// over http.DefaultClient, without a cache. It is safe for concurrent use
// when its Cache is.
type Client struct {
	// BaseURL is the registry, without /v0.1; "" means DefaultURL.
	BaseURL string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP *http.Client
	// Cache keeps answers with their ETag, revalidated with
	// If-None-Match; nil keeps nothing.
	Cache *Cache
	// UserAgent is sent when set.
	UserAgent string
}

// ErrNotFound is wrapped by the error of a server or version the
// registry does not have.
var ErrNotFound = errors.New("not found")

// Search returns the servers whose name contains query, following the
// registry's cursors until it has limit of them (0: every one).
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Response, error) {
	var out []Response
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		page, err := c.Page(ctx, query, cursor, limit-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, page.Servers...)
		next := page.Metadata.NextCursor
		if next == "" || limit > 0 && len(out) >= limit {
			return truncate(out, limit), nil
		}
		if len(next) > maxCursorBytes {
			return nil, fmt.Errorf("searching %s: the registry sent a cursor of %d bytes (at most %d are followed); its listing is not one to page through", c.base(), len(next), maxCursorBytes)
		}
		if seen[next] {
			return nil, fmt.Errorf("searching %s: the registry sent the cursor %q twice; its listing does not end", c.base(), next)
		}
		seen[next], cursor = true, next
	}
	return nil, fmt.Errorf("searching %s: more than %d pages; narrow the search", c.base(), maxPages)
}

func truncate(rs []Response, limit int) []Response {
	if limit > 0 && len(rs) > limit {
		return rs[:limit]
	}
	return rs
}

// Page is one page of servers whose name contains query (the latest
// version of each), after cursor ("" for the first); limit <= 0 leaves the
// page size to the registry.
func (c *Client) Page(ctx context.Context, query, cursor string, limit int) (List, error) {
	q := url.Values{"version": {"latest"}}
	if query != "" {
		q.Set("search", query)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(min(limit, 100)))
	}
	u := c.base() + apiPath + "/servers?" + q.Encode()
	// A listing is not checked against the schema beyond its types: one
	// server's broken document must not hide the others; Get checks the
	// one that is added.
	var l List
	if err := c.getJSON(ctx, u, &l); err != nil {
		return List{}, err
	}
	return l, nil
}

// Get returns one version of the server called name; version "" or
// "latest" is its latest.
func (c *Client) Get(ctx context.Context, name, version string) (Response, error) {
	version = cmp.Or(version, "latest")
	u := c.base() + apiPath + "/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	var r Response
	err := c.getJSON(ctx, u, &r)
	if errors.Is(err, ErrNotFound) {
		what := fmt.Sprintf("no server %q", name)
		if version != "latest" {
			what = fmt.Sprintf("no version %s of %q", version, name)
		}
		return Response{}, fmt.Errorf("the registry at %s has %s (%w): names look like io.github.owner/server; find one with 'mcpbridge registry search WORD'", c.base(), what, err)
	}
	if err != nil {
		return Response{}, err
	}
	if err := r.Server.check(); err != nil {
		return Response{}, &MalformedError{Where: u, Msg: err.Error()}
	}
	if got := r.Server; got.Name != name || version != "latest" && got.Version != version {
		// What is added is what was asked for, whatever the registry (or a
		// proxy in front of it) answers.
		return Response{}, fmt.Errorf("the registry at %s answered the request for %s with %s %s, not the server asked for; check MCPBRIDGE_REGISTRY_URL", c.base(), asked(name, version), got.Name, got.Version)
	}
	return r, nil
}

// asked names what a Get asked for: a server, or a version of one.
func asked(name, version string) string {
	if version == "latest" {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("version %s of %q", version, name)
}

func (c *Client) base() string {
	return strings.TrimSuffix(strings.TrimSuffix(cmp.Or(c.BaseURL, DefaultURL), "/"), apiPath)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// getJSON fetches u (revalidating a cached copy) and decodes it into v.
func (c *Client) getJSON(ctx context.Context, u string, v any) error {
	body, err := c.fetch(ctx, u)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, u)
}

// fetch returns the body of a 200 answer to GET u, or the cached body on
// a 304.
func (c *Client) fetch(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("the registry URL %q is not valid (%v): set %s to an http(s) URL like %s", c.base(), err, EnvURL, DefaultURL)
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	cached, hit := c.Cache.get(u)
	if hit && cached.ETag != "" {
		req.Header.Set("If-None-Match", cached.ETag)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the MCP Registry at %s: %w; check the network, or set %s to a registry you can reach (a server.json file needs none: mcpbridge add --from-registry ./server.json)", c.base(), err, EnvURL)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", u, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("the answer of %s is larger than %d MiB; it is not a registry's", u, maxBody>>20)
	}
	return c.answer(u, resp, body, cached, hit)
}

// answer interprets a response to GET u: the body to decode, the cached
// one on 304, or an error that says what came back.
func (c *Client) answer(u string, resp *http.Response, body []byte, cached cacheEntry, hit bool) ([]byte, error) {
	inJSON := isJSON(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusNotModified && hit:
		return cached.Body, nil
	case resp.StatusCode == http.StatusNotFound && inJSON:
		return nil, fmt.Errorf("GET %s: %w", u, ErrNotFound)
	case resp.StatusCode == http.StatusNotFound:
		// The registry says "not found" in JSON; a page of another server
		// (a wrong base URL) is not its word on the name.
		return nil, fmt.Errorf("the registry at %s answered 404 Not Found to GET %s with %s, not the registry's JSON%s: is %s the registry's base URL (like %s)?",
			c.base(), u, cmp.Or(resp.Header.Get("Content-Type"), "no content type"), startsWith(body), EnvURL, DefaultURL)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("the registry at %s answered %s to GET %s%s", c.base(), resp.Status, u, errorText(body))
	}
	if !inJSON {
		return nil, fmt.Errorf("the registry at %s answered GET %s with %s, not JSON%s: is %s the registry's base URL (like %s)?",
			c.base(), u, cmp.Or(resp.Header.Get("Content-Type"), "no content type"), startsWith(body), EnvURL, DefaultURL)
	}
	if etag := resp.Header.Get("ETag"); etag != "" {
		c.Cache.put(u, etag, body)
	}
	return body, nil
}

// isJSON reports whether a Content-Type is JSON (application/json or a
// +json type).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// errorText is the registry's {"error": "..."} message, or the start of
// the body.
func errorText(body []byte) string {
	var e struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil && cmp.Or(e.Error, e.Detail) != "" {
		return ": " + cmp.Or(e.Error, e.Detail)
	}
	return startsWith(body)
}
