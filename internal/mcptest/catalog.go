package mcptest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// CatalogEntries serves each server of [mcppeer.Catalog] over Streamable
// HTTP on 127.0.0.1 until the end of the test and returns the mcp-client
// entries of a config file for them (the servers in alwaysLoad with
// alwaysLoad: true), and the servers by name.
func CatalogEntries(t testing.TB, alwaysLoad ...string) (string, map[string]*mcppeer.CatalogServer) {
	t.Helper()
	var b strings.Builder
	byName := map[string]*mcppeer.CatalogServer{}
	for _, s := range mcppeer.Catalog() {
		byName[s.Name] = s
		hs := NewHTTPServer(t, s.Server, HTTPOptions{})
		fmt.Fprintf(&b, "- {id: %s, name: mcp-client, config: {serverName: %s, transport: streamable-http, url: %q, alwaysLoad: %v}}\n",
			s.Name, s.Name, hs.URL, slices.Contains(alwaysLoad, s.Name))
	}
	return b.String(), byName
}
