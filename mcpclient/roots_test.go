package mcpclient

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// server-filesystem takes the roots it is offered in place of the
// directories of its args; offered none (roots: [] or no roots key: the
// roots capability with an empty roots/list), it keeps them. Either way it
// no longer warns that the client lacks roots.
func TestServerFilesystemRoots(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	args, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		roots []string
		want  string
	}{
		{"roots given", []string{root}, root},
		{"no roots", []string{}, args},
		{"roots absent", nil, args},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{ServerName: "fs", Transport: TransportStdio, Command: bin, Args: []string{args}, Roots: c.roots}
			h := mustStart(t, cfg, Options{})
			// It applies roots after the handshake, on its own time: what
			// it allows is read once it has said it dealt with them.
			waitFor(t, "the server settling its roots", func() bool {
				return strings.Contains(h.log.Text(), "Updated allowed directories from MCP roots") ||
					strings.Contains(h.log.Text(), "No valid root directories provided by client")
			})
			waitFor(t, "allowed directories "+c.want, func() bool {
				res := h.call("mcp__fs__list_allowed_directories", `{}`)
				return !res.IsError && strings.TrimSpace(strings.TrimPrefix(res.Text(), "Allowed directories:")) == c.want
			})
			if strings.Contains(h.log.Text(), "does not support MCP Roots") {
				t.Errorf("the server still warns about roots:\n%s", h.log.Text())
			}
		})
	}
}
