package mcpclient_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

func TestDecodeSandbox(t *testing.T) {
	const stdio = "{serverName: s, transport: stdio, command: c, "
	base := func(sb *mcpclient.Sandbox) mcpclient.Config {
		return mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Sandbox: sb}
	}
	tests := []struct {
		name, src string
		want      mcpclient.Config
	}{
		{"absent", stdio + "}", base(nil)},
		{"empty: every default", stdio + "sandbox: {}}", base(&mcpclient.Sandbox{})},
		{"every key, paths expanded", stdio + "sandbox: {read: [/data, '${WORKDIR}/in'], write: [./out], network: true, bestEffort: true, memoryMiB: 512, processes: 64, openFiles: 256}}",
			base(&mcpclient.Sandbox{Read: []string{"/data", "/srv/work/in"}, Write: []string{"./out"}, Network: true, BestEffort: true,
				MemoryMiB: 512, Processes: 64, OpenFiles: 256})},
		// As a shell does: ~ where the file writes it, not in a variable's value.
		{"~ and ${HOME}", stdio + "sandbox: {read: [~/notes, '~', '${HOME}/.pyenv', '${TILDE}'], write: ['~/out/~']}}",
			base(&mcpclient.Sandbox{Read: []string{"/home/ann/notes", "/home/ann", "/home/ann/.pyenv", "~/from-a-variable"}, Write: []string{"/home/ann/out/~"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := decodeYAML(t, tt.src)
			if errs != "" {
				t.Fatalf("DecodeConfig failed:\n%s", errs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeConfig (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("a decoded config does not pass Validate:\n%v", err)
			}
		})
	}
}

func TestDecodeSandboxErrors(t *testing.T) {
	const ok = "serverName: srv\ntransport: stdio\ncommand: echo\n" // lines 1-3
	tests := []struct{ name, src, want string }{
		// Every key commented out: not taken for absent, which runs the
		// server unconfined.
		{"empty", ok + "sandbox:\n#  read: [/data]\n#  network: false",
			`4:9: config.sandbox: is empty: write sandbox: {} to confine the server with the defaults (no network, read only the system and its own runtime), or remove the key to run it unconfined`},
		{"null", ok + "sandbox: null",
			`4:10: config.sandbox: is empty: write sandbox: {} to confine the server with the defaults (no network, read only the system and its own runtime), or remove the key to run it unconfined`},
		{"not a mapping", ok + "sandbox: true",
			`4:10: config.sandbox: must be a mapping of keys to values, got the boolean true`},
		{"unknown key", ok + "sandbox: {exec: [/bin]}",
			`4:11: config.sandbox.exec: "exec" is not a sandbox key (valid keys: read, write, network, bestEffort, memoryMiB, processes, openFiles)`},
		{"read not a list", ok + "sandbox: {read: /data}",
			`4:17: config.sandbox.read: must be a list of strings, got a string`},
		{"a path not a string", ok + "sandbox:\n  write: [/ok, 7]",
			`5:16: config.sandbox.write[1]: must be a string, got the integer 7 (quote it: "7")`},
		{"an empty path", ok + "sandbox:\n  read: ['']",
			`5:10: config.sandbox.read[0]: must be a path: not empty, without NUL characters`},
		{"network not a bool", ok + "sandbox: {network: no}",
			`4:20: config.sandbox.network: must be true or false, got a string`},
		{"limit zero", ok + "sandbox: {memoryMiB: 0}",
			`4:22: config.sandbox.memoryMiB: must be between 1 and 1073741824, got 0`},
		{"~user", ok + "sandbox:\n  read: [~bob/notes]",
			`5:10: config.sandbox.read[0]: ~bob: only ~ alone or before a / stands for the home directory (~user is not looked up): write the path in full`},
		{"on an HTTP server", "serverName: srv\ntransport: streamable-http\nurl: http://h/mcp\nsandbox: {}",
			`4:10: config.sandbox: sandbox is only valid with transport: stdio`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := decodeYAML(t, tt.src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeConfig errors (-want +got):\n%s", diff)
			}
		})
	}
}

// ~ needs HOME; without it the path is refused where it is written.
func TestDecodeSandboxTildeWithoutHome(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("{serverName: s, transport: stdio, command: c,\n sandbox: {write: [~/notes]}}"), &doc); err != nil {
		t.Fatal(err)
	}
	_, err := mcpclient.DecodeConfig(doc.Content[0], func(string) (string, bool) { return "", false })
	const want = "2:20: config.sandbox.write[0]: ~ stands for the home directory, and HOME is not set: write the path in full"
	if err == nil || err.Error() != want {
		t.Errorf("DecodeConfig without HOME: %v, want %s", err, want)
	}
}

// A harness confines a stdio server by setting Sandbox; Validate checks
// the block as DecodeConfig does.
func ExampleSandbox() {
	cfg := mcpclient.Config{
		ServerName: "fs",
		Transport:  mcpclient.TransportStdio,
		Command:    "npx",
		Args:       []string{"-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/srv/notes"},
		Env:        map[string]string{"npm_config_offline": "true"},
		Sandbox:    &mcpclient.Sandbox{Write: []string{"/srv/notes"}, MemoryMiB: 1024},
	}
	fmt.Println(cfg.Validate())

	cfg.Sandbox.Read = []string{""}
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
	// sandbox.read[0]: must be a path: not empty, without NUL characters
}

// A Config built in Go gets the rules DecodeConfig applies to YAML.
func TestValidateSandbox(t *testing.T) {
	tests := []struct {
		name string
		cfg  mcpclient.Config
		want string
	}{
		{"on an HTTP server", mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStreamableHTTP, URL: "http://h/mcp", Sandbox: &mcpclient.Sandbox{}},
			"sandbox: sandbox is only valid with transport: stdio (it confines a child process)"},
		{"a negative limit", mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Sandbox: &mcpclient.Sandbox{Processes: -1}},
			"sandbox.processes: must be between 1 and 1073741824 (0 or absent: no limit)"},
		{"a NUL in a path", mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Sandbox: &mcpclient.Sandbox{Write: []string{"/a\x00b"}}},
			"sandbox.write[0]: must be a path: not empty, without NUL characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate() = %v, want %s", err, tt.want)
			}
		})
	}
	// WithDefaults copies the block: changing the copy leaves the original.
	orig := mcpclient.Config{Sandbox: &mcpclient.Sandbox{Read: []string{"/a"}}}
	c := orig.WithDefaults()
	c.Sandbox.Read[0] = "/changed"
	if orig.Sandbox.Read[0] != "/a" {
		t.Error("WithDefaults shares the sandbox block with its receiver")
	}
}
