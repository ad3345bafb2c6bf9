package mcpclient_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// registry: {name, version} is what add --from-registry records; the
// config accepts it, and says what is wrong with a broken one.
func TestDecodeConfigRegistry(t *testing.T) {
	const ok = "serverName: srv\ntransport: stdio\ncommand: npx\n"
	c, errText := decodeYAML(t, ok+"registry: {name: io.github.owner/server, version: 1.2.3}")
	if errText != "" {
		t.Fatal(errText)
	}
	if diff := cmp.Diff(&mcpclient.RegistryRef{Name: "io.github.owner/server", Version: "1.2.3"}, c.Registry); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	copied := c.WithDefaults()
	copied.Registry.Version = "9"
	if c.Registry.Version != "1.2.3" {
		t.Error("WithDefaults shares the registry reference")
	}
	for _, tt := range []struct{ src, want string }{
		{"registry: {name: io.github.owner/server}", `config.registry.version: is required`},
		{"registry: {name: io.github.owner/server, version: 1, latest: 2}", `config.registry.latest`},
		{"registry: io.github.owner/server", `config.registry`},
		{"registry: {name: [a], version: 1}", `config.registry.name`},
	} {
		_, errText := decodeYAML(t, ok+tt.src)
		if !strings.Contains(errText, tt.want) {
			t.Errorf("%s: %q, want %q in it", tt.src, errText, tt.want)
		}
	}
}

// The registry reference changes nothing in how the server runs: the
// config a reload compares (its JSON) is the same with or without it, so
// a reload that changes it alone restarts nothing.
func TestRegistryRefNotCompared(t *testing.T) {
	c := mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "npx"}
	with := c
	with.Registry = &mcpclient.RegistryRef{Name: "io.github.owner/server", Version: "2.0.0"}
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(with)
	if string(a) != string(b) {
		t.Errorf("the registry reference is part of the compared config:\n%s\n%s", a, b)
	}
}
