// Package registrytest is an MCP Registry of the tests' own: an
// httptest server that answers the /v0.1 API (search with cursors, a
// version or the latest of a server) with the server.json documents it is
// given, with ETags, and with whatever broken answer a test sets.
package registrytest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Registry is a running fixture registry. Its methods are safe for
// concurrent use.
type Registry struct {
	// URL is the registry's base URL (what MCPBRIDGE_REGISTRY_URL holds).
	URL string
	// PageSize is the most servers one page holds, whatever limit asks;
	// New sets 30. Set it before the first request.
	PageSize int

	mu       sync.Mutex
	versions map[string][]json.RawMessage // by name, oldest first
	order    []string                     // names, in the order first published
	raw      map[string]rawAnswer         // by path, set by Answer
	status   map[string][2]string         // by name@version: status, statusMessage (Deprecate)
	requests []string                     // request URIs, in order
	notMod   int                          // 304s sent
}

type rawAnswer struct {
	status      int
	contentType string
	body        string
}

// New starts a registry serving every server.json in dir (in file-name
// order; a later document of a name is its newer version). It stops when
// the test ends.
func New(t testing.TB, dir string) *Registry {
	t.Helper()
	r := &Registry{PageSize: 30, versions: map[string][]json.RawMessage{}, raw: map[string]rawAnswer{}, status: map[string][2]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r.Publish(t, data)
	}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Publish adds a version of a server: the newest, its latest.
func (r *Registry) Publish(t testing.TB, doc []byte) {
	t.Helper()
	var s struct{ Name, Version string }
	if err := json.Unmarshal(doc, &s); err != nil || s.Name == "" {
		t.Fatalf("registrytest: a document without a name: %v", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.versions[s.Name]; !ok {
		r.order = append(r.order, s.Name)
	}
	r.versions[s.Name] = append(r.versions[s.Name], json.RawMessage(doc))
}

// Deprecate marks a version deprecated, with message, as the official
// registry's _meta says.
func (r *Registry) Deprecate(name, version, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status[name+"@"+version] = [2]string{"deprecated", message}
}

// Answer makes the registry answer GET path (as sent, escaped) with
// status, contentType and body instead.
func (r *Registry) Answer(path string, status int, contentType, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.raw[path] = rawAnswer{status, contentType, body}
}

// Requests are the request URIs received, in order.
func (r *Registry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// NotModified is how many requests were answered 304 Not Modified.
func (r *Registry) NotModified() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notMod
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req.URL.RequestURI())
	raw, isRaw := r.raw[req.URL.EscapedPath()]
	r.mu.Unlock()
	if isRaw {
		w.Header().Set("Content-Type", raw.contentType)
		w.WriteHeader(raw.status)
		w.Write([]byte(raw.body))
		return
	}
	path := req.URL.EscapedPath()
	switch {
	case path == "/v0.1/servers":
		r.send(w, req, r.list(req.URL.Query()))
	case strings.HasPrefix(path, "/v0.1/servers/"):
		r.version(w, req, strings.TrimPrefix(path, "/v0.1/servers/"))
	default:
		notFound(w)
	}
}

// version answers /v0.1/servers/{name}/versions/{version}.
func (r *Registry) version(w http.ResponseWriter, req *http.Request, rest string) {
	escName, escVersion, ok := strings.Cut(rest, "/versions/")
	name, err1 := url.PathUnescape(escName)
	version, err2 := url.PathUnescape(escVersion)
	if !ok || err1 != nil || err2 != nil {
		notFound(w)
		return
	}
	resp, ok := r.find(name, version)
	if !ok {
		notFound(w)
		return
	}
	r.send(w, req, resp)
}

// find is one version of name wrapped as the registry serves it.
func (r *Registry) find(name, version string) (map[string]any, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	docs := r.versions[name]
	for i := len(docs) - 1; i >= 0; i-- {
		var s struct{ Version string }
		json.Unmarshal(docs[i], &s)
		if version == "latest" && i == len(docs)-1 || s.Version == version {
			resp := wrap(docs[i], i == len(docs)-1)
			if st, ok := r.status[name+"@"+s.Version]; ok {
				official := resp["_meta"].(map[string]any)["io.modelcontextprotocol.registry/official"].(map[string]any)
				official["status"], official["statusMessage"] = st[0], st[1]
			}
			return resp, true
		}
	}
	return nil, false
}

// list answers a search: the latest version of each server whose name
// contains search, limit a page (at most PageSize), after cursor (the name
// the previous page ended with).
func (r *Registry) list(q url.Values) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 || limit > r.PageSize {
		limit = r.PageSize
	}
	var names []string
	for _, n := range r.order {
		if strings.Contains(n, q.Get("search")) {
			names = append(names, n)
		}
	}
	if c := q.Get("cursor"); c != "" {
		names = names[slices.Index(names, c)+1:]
	}
	servers := []any{}
	meta := map[string]any{}
	for i, n := range names {
		if i == limit {
			meta["nextCursor"] = names[i-1]
			break
		}
		docs := r.versions[n]
		servers = append(servers, wrap(docs[len(docs)-1], true))
	}
	meta["count"] = len(servers)
	return map[string]any{"servers": servers, "metadata": meta}
}

// wrap is a document with the official registry's metadata.
func wrap(doc json.RawMessage, latest bool) map[string]any {
	return map[string]any{"server": doc, "_meta": map[string]any{
		"io.modelcontextprotocol.registry/official": map[string]any{
			"status": "active", "publishedAt": "2025-12-01T10:30:00Z", "isLatest": latest,
		},
	}}
}

// send writes v as JSON with its ETag, or 304 when the client has it.
func (r *Registry) send(w http.ResponseWriter, req *http.Request, v any) {
	body, _ := json.Marshal(v)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if req.Header.Get("If-None-Match") == etag {
		r.mu.Lock()
		r.notMod++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"title":"Not Found","status":404,"detail":"Server not found"}`))
}
