package yamlconf_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// env is a lookup over a fixed map, so tests never read the real environment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

const secret = "s3cr3t-t0ken"

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": secret, "EMPTY": "", "HOST": "example.test"})
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{name: "no dollar", in: "plain text", want: "plain text"},
		{name: "empty", in: "", want: ""},
		{name: "set", in: "Bearer ${TOKEN}", want: "Bearer " + secret},
		{name: "two", in: "${HOST}/${TOKEN}", want: "example.test/" + secret},
		{name: "set but empty", in: "[${EMPTY}]", want: "[]"},
		{name: "default unused", in: "${HOST:-fallback}", want: "example.test"},
		{name: "default when unset", in: "${NOPE:-fallback}", want: "fallback"},
		{name: "default when empty", in: "${EMPTY:-fallback}", want: "fallback"},
		{name: "empty default", in: "x${NOPE:-}y", want: "xy"},
		{name: "default is literal", in: "${NOPE:-$$a:-b}", want: "$$a:-b"},
		{name: "double dollar", in: "cost $$5 and $${HOST}", want: "cost $5 and ${HOST}"},
		{name: "lone dollar", in: "a $ b", want: "a $ b"},
		{name: "dollar then letter", in: "$HOST", want: "$HOST"},
		{name: "trailing dollar", in: "a$", want: "a$"},
		{name: "underscore and digits", in: "${_A1:-ok}", want: "ok"},
		{
			name:    "unset",
			in:      "${GITHUB_TOKEN}",
			wantErr: `environment variable "GITHUB_TOKEN" is not set (use ${GITHUB_TOKEN:-default} for a fallback)`,
		},
		{
			name:    "unclosed",
			in:      "${TOKEN",
			wantErr: `unclosed "${": add the closing "}", or write "$$" for a literal "$"`,
		},
		{
			name:    "empty name",
			in:      "${}",
			wantErr: `unsupported reference "${}": use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _`,
		},
		{
			name:    "name starts with digit",
			in:      "${1A}",
			wantErr: `unsupported reference "${1A}": use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _`,
		},
		{
			name:    "other operator",
			in:      "${A-b}",
			wantErr: `unsupported reference "${A-b}": use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _`,
		},
		{
			name: "every problem",
			in:   "${TOKEN}${A}${B}${",
			wantErr: `environment variable "A" is not set (use ${A:-default} for a fallback)` + "\n" +
				`environment variable "B" is not set (use ${B:-default} for a fallback)` + "\n" +
				`unclosed "${": add the closing "}", or write "$$" for a literal "$"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := yamlconf.Expand(tt.in, lookup)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				if strings.Contains(gotErr, secret) {
					t.Errorf("error text contains the expanded secret: %q", gotErr)
				}
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("Expand(%q) error (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Expand(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExpandNilLookup(t *testing.T) {
	if got, err := yamlconf.Expand("${A:-d}", nil); err != nil || got != "d" {
		t.Errorf(`Expand("${A:-d}", nil) = %q, %v; want "d", nil`, got, err)
	}
	if _, err := yamlconf.Expand("${A}", nil); err == nil {
		t.Error(`Expand("${A}", nil) succeeded; a nil lookup must mean "nothing is set"`)
	}
}
