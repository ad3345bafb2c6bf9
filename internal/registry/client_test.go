package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/registry"
	"github.com/mcpbridge/mcpbridge/internal/registry/registrytest"
)

func names(rs []registry.Response) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Server.Name)
	}
	return out
}

// A search follows the registry's cursors page by page until it has what
// it asked for, sending each cursor back as it came.
func TestSearchFollowsCursors(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, "testdata/servers")
	reg.PageSize = 2
	c := &registry.Client{BaseURL: reg.URL}
	got, err := c.Search(context.Background(), "io.modelcontextprotocol", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"io.modelcontextprotocol.anonymous/brave-search",
		"io.modelcontextprotocol.anonymous/hybrid-mcp",
		"io.modelcontextprotocol.anonymous/multi-tenant-server",
		"io.modelcontextprotocol/text-editor",
	}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var cursors int
	for _, r := range reg.Requests() {
		if strings.Contains(r, "cursor=") {
			cursors++
		}
	}
	if cursors != 1 {
		t.Errorf("%d requests with a cursor, want 1 (two pages): %v", cursors, reg.Requests())
	}
	some, err := c.Search(context.Background(), "", 3)
	if err != nil || len(some) != 3 {
		t.Errorf("Search with limit 3: %d servers, %v", len(some), err)
	}
}

// A cursor the registry sends twice would page forever: the search
// stops with an error that says so.
func TestSearchRepeatedCursor(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"servers": [], "metadata": {"nextCursor": "again"}}`))
	}))
	defer srv.Close()
	_, err := (&registry.Client{BaseURL: srv.URL}).Search(context.Background(), "x", 0)
	if err == nil || !strings.Contains(err.Error(), `sent the cursor "again" twice`) {
		t.Fatalf("err = %v", err)
	}
}

// A hostile registry cannot make a search hold gigabytes: each page may
// be megabytes of cursor, each kept to see it come back and sent in the
// next URL. A cursor over the bound ends the search at once, saying why;
// the search used to follow a thousand of them.
func TestSearchHugeCursor(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := pages.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"servers": [], "metadata": {"nextCursor": "%d%s"}}`, n, strings.Repeat("c", 1<<20))
	}))
	defer srv.Close()
	_, err := (&registry.Client{BaseURL: srv.URL}).Search(context.Background(), "x", 0)
	if err == nil || !strings.Contains(err.Error(), "the registry sent a cursor of 1048577 bytes (at most 4096 are followed)") {
		t.Fatalf("err = %v", err)
	}
	if n := pages.Load(); n != 1 {
		t.Errorf("%d pages read, want 1", n)
	}
}

// Get finds a version by name (its slash escaped in the path) and
// version, or the latest.
func TestGet(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, "testdata/servers")
	c := &registry.Client{BaseURL: reg.URL + "/v0.1/"} // a base written with the API path works too
	r, err := c.Get(context.Background(), "io.github.joelverhagen/knapcode-samplemcpserver", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Server.Version != "0.4.0-beta" || r.Meta.Official == nil || !r.Meta.Official.IsLatest {
		t.Errorf("latest: %+v %+v", r.Server, r.Meta.Official)
	}
	data, err := os.ReadFile("testdata/newer/knapcode-samplemcpserver-0.5.0.json")
	if err != nil {
		t.Fatal(err)
	}
	reg.Publish(t, data)
	r, err = c.Get(context.Background(), "io.github.joelverhagen/knapcode-samplemcpserver", "latest")
	if err != nil || r.Server.Version != "0.5.0" {
		t.Errorf("after publishing 0.5.0: %v %v", r.Server.Version, err)
	}
	r, err = c.Get(context.Background(), "io.github.joelverhagen/knapcode-samplemcpserver", "0.4.0-beta")
	if err != nil || r.Server.Version != "0.4.0-beta" || r.Meta.Official.IsLatest {
		t.Errorf("0.4.0-beta: %v %+v %v", r.Server.Version, r.Meta.Official, err)
	}
	want := "/v0.1/servers/io.github.joelverhagen%2Fknapcode-samplemcpserver/versions/latest"
	if reqs := reg.Requests(); reqs[0] != want {
		t.Errorf("first request %q, want %q", reqs[0], want)
	}
}

// What goes wrong says what and how to fix it: a name the registry does
// not have (404), a document that breaks the schema, an answer that is
// not JSON (a proxy's page, a wrong URL), and a registry out of reach.
func TestGetErrors(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, "testdata/servers")
	data, err := os.ReadFile("testdata/invalid/package-version-latest.json")
	if err != nil {
		t.Fatal(err)
	}
	reg.Publish(t, data)
	reg.Answer("/v0.1/servers/io.github.example%2Fportal/versions/latest", 200, "text/html", "<!doctype html><title>Sign in</title>")
	reg.Answer("/v0.1/servers/io.github.example%2Fdown/versions/latest", 503, "application/json", `{"title":"Service Unavailable","detail":"database is down"}`)
	reg.Answer("/v0.1/servers/io.github.example%2Fwrong-base/versions/latest", 404, "text/plain; charset=utf-8", "404 page not found\n")
	other, err := http.Get(reg.URL + "/v0.1/servers/io.github.modelcontextprotocol%2Ffilesystem/versions/latest")
	if err != nil {
		t.Fatal(err)
	}
	otherDoc, _ := io.ReadAll(other.Body)
	other.Body.Close()
	// A registry (or a proxy before it) answering with another server than
	// the one asked for: the entry would run what the user did not name.
	reg.Answer("/v0.1/servers/io.github.example%2Fweather/versions/latest", 200, "application/json", string(otherDoc))
	reg.Answer("/v0.1/servers/io.github.modelcontextprotocol%2Ffilesystem/versions/0.0.1", 200, "application/json", string(otherDoc))
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	tests := []struct {
		base, name, version string
		want                []string
	}{
		{reg.URL, "io.github.nobody/nothing", "", []string{`has no server "io.github.nobody/nothing"`, "mcpbridge registry search"}},
		{reg.URL, "io.github.modelcontextprotocol/filesystem", "9.9.9", []string{`no version 9.9.9 of "io.github.modelcontextprotocol/filesystem"`}},
		{reg.URL, "io.github.user/bad-version", "", []string{"is not a valid server.json", `packages[0]: "version" must be a specific version`}},
		{reg.URL, "io.github.example/portal", "", []string{"with text/html, not JSON", `"<!doctype html>`, "MCPBRIDGE_REGISTRY_URL"}},
		{reg.URL, "io.github.example/down", "", []string{"answered 503 Service Unavailable", "database is down"}},
		// a 404 that is not the registry's JSON: another server's page, not its word on the name
		{reg.URL, "io.github.example/wrong-base", "", []string{"404 Not Found", "not the registry's JSON", "MCPBRIDGE_REGISTRY_URL"}},
		{reg.URL, "io.github.example/weather", "", []string{`answered the request for "io.github.example/weather" with io.github.modelcontextprotocol/filesystem `, "not the server asked for"}},
		{reg.URL, "io.github.modelcontextprotocol/filesystem", "0.0.1", []string{`answered the request for version 0.0.1 of "io.github.modelcontextprotocol/filesystem" with io.github.modelcontextprotocol/filesystem `, "not the server asked for"}},
		{gone.URL, "io.github.a/b", "", []string{"reaching the MCP Registry at " + gone.URL, "check the network", "MCPBRIDGE_REGISTRY_URL", "./server.json"}},
	}
	for _, tt := range tests {
		_, err := (&registry.Client{BaseURL: tt.base}).Get(context.Background(), tt.name, tt.version)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant %q in it", tt.name, err, w)
			}
		}
	}
	_, err = (&registry.Client{BaseURL: reg.URL}).Get(context.Background(), "io.github.nobody/nothing", "")
	if !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a 404 does not wrap ErrNotFound: %v", err)
	}
}

// An answer is kept with its ETag and revalidated: the second request
// carries If-None-Match, the registry answers 304, and the kept document
// is used. The cache keeps at most MaxEntries answers.
func TestCacheRevalidatesWithETag(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, "testdata/servers")
	dir := filepath.Join(t.TempDir(), "cache")
	c := &registry.Client{BaseURL: reg.URL, Cache: &registry.Cache{Dir: dir, MaxEntries: 2}}
	ctx := context.Background()
	first, err := c.Get(ctx, "io.modelcontextprotocol.anonymous/hybrid-mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Get(ctx, "io.modelcontextprotocol.anonymous/hybrid-mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	if reg.NotModified() != 1 {
		t.Errorf("%d answers 304, want 1", reg.NotModified())
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the revalidated answer differs (-first +second):\n%s", diff)
	}
	for _, name := range []string{"io.modelcontextprotocol/text-editor", "io.github.example/weather-mcp", "io.github.example/database-manager"} {
		if _, err := c.Get(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 2 {
		t.Errorf("%d answers kept, want MaxEntries 2", len(files))
	}
}

// One server's broken document does not hide the others from a search;
// it is refused when it is fetched to be added.
func TestSearchListsPastABrokenDocument(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t, "testdata/servers")
	data, err := os.ReadFile("testdata/invalid/package-version-latest.json")
	if err != nil {
		t.Fatal(err)
	}
	reg.Publish(t, data)
	c := &registry.Client{BaseURL: reg.URL}
	found, err := c.Search(context.Background(), "io.github", 0)
	if err != nil || len(found) != 7 {
		t.Fatalf("search: %d servers, %v", len(found), err)
	}
	if _, err := c.Get(context.Background(), "io.github.user/bad-version", ""); err == nil {
		t.Error("the broken document was accepted by Get")
	}
}
