package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A command, working directory or URL host that came from ${VAR} is shown
// as written in every message the server produces: the first attempt's
// error, Status().Err and the log.
func TestExpandedValuesNeverShown(t *testing.T) {
	const secret = "s3cr3t-v4lue"
	notDir := filepath.Join(t.TempDir(), secret+"-file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"SECRET_CMD":  "no-such-" + secret,
		"SECRET_PATH": "/nonexistent/" + secret,
		"SECRET_FILE": notDir,
		"SECRET_HOST": "127.0.0.1", // a secret host for the test: its lookup must not show
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct {
		name, yaml, want string
	}{
		{"command not found", "command: ${SECRET_CMD}",
			`start "${SECRET_CMD}": exec: "${SECRET_CMD}": executable file not found in $PATH`},
		{"command path not found", "command: ${SECRET_PATH}/server",
			`start "${SECRET_PATH}/server": fork/exec ${SECRET_PATH}/server: no such file or directory`},
		{"missing cwd", "command: sh\ncwd: ${SECRET_PATH}",
			`start "sh": working directory: stat ${SECRET_PATH}: no such file or directory`},
		{"cwd not a directory", "command: sh\ncwd: ${SECRET_FILE}",
			`start "sh": working directory "${SECRET_FILE}" is not a directory`},
		{"default as written", "command: ${NOPE:-" + "/x/" + secret + "}",
			`start "${NOPE:-/x/` + secret + `}": fork/exec ${NOPE:-/x/` + secret + `}: no such file or directory`},
		{"url host", "transport: streamable-http\nurl: http://${SECRET_HOST}:1/mcp",
			`Post "http://${SECRET_HOST}:1/…": dial tcp ${SECRET_HOST}:1: connect: connection refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "serverName: s\nfailOnStartupError: true\n" + tt.yaml
			if !strings.Contains(src, "transport:") {
				src += "\ntransport: stdio"
			}
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
				t.Fatal(err)
			}
			cfg, err := DecodeConfig(doc.Content[0], lookup)
			if err != nil {
				t.Fatalf("DecodeConfig: %v", err)
			}
			h, err := start(t, cfg, Options{})
			if err == nil {
				t.Fatal("the first attempt succeeded")
			}
			texts := append(h.log.Lines(), err.Error(), h.srv.Status().Err)
			for _, text := range texts {
				for name, v := range vars {
					if strings.Contains(text, v) && !strings.Contains(tt.yaml, v) {
						t.Errorf("the value of %s shows: %q", name, text)
					}
				}
			}
			if !strings.Contains(h.srv.Status().Err, tt.want) {
				t.Errorf("Status().Err = %q, want it to contain %q", h.srv.Status().Err, tt.want)
			}
		})
	}
}

func TestWrittenHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://${HOST}/mcp":             "${HOST}",
		"https://${HOST}:8443/mcp?x=1":    "${HOST}",
		"https://u:${PW}@api.${DOMAIN}#f": "api.${DOMAIN}",
		"http://${HOST:-localhost:8080}":  "${HOST:-localhost:8080}",
		"${URL}":                          "",
		"https://${HOST}:${PORT}/mcp":     "${HOST}:${PORT}",
	} {
		if got := writtenHost(in); got != want {
			t.Errorf("writtenHost(%q) = %q, want %q", in, got, want)
		}
	}
}
