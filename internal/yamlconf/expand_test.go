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
		{name: "dollars in a default", in: "${NOPE:-$$a:-b $x}", want: "$a:-b $x"},
		{name: "nested default", in: "${NOPE:-${HOST}}", want: "example.test"},
		{name: "nested default of a default", in: "${NOPE:-${NADA:-x}}/y", want: "x/y"},
		{name: "nested default unused", in: "${HOST:-${NOPE}}", want: "example.test"},
		{name: "nested when empty", in: "${EMPTY:-${TOKEN}}", want: secret},
		{name: "text around nested", in: "a${NOPE:-b${HOST}c$$d}e}", want: "abexample.testc$de}"},
		{name: "two nested", in: "${NOPE:-${NADA:-1}${HOST}}", want: "1example.test"},
		{name: "escaped reference in default", in: "${NOPE:-$${HOST}}", want: "${HOST}"},
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
			name:    "unset inside a used default",
			in:      "${NOPE:-${NADA}}",
			wantErr: `environment variable "NADA" is not set (use ${NADA:-default} for a fallback)`,
		},
		{
			name:    "unclosed nested",
			in:      "${NOPE:-${HOST}",
			wantErr: `unclosed "${": add the closing "}", or write "$$" for a literal "$"`,
		},
		{
			name:    "unclosed inside an unused default",
			in:      "${HOST:-${NOPE",
			wantErr: `unclosed "${": add the closing "}", or write "$$" for a literal "$"`,
		},
		{
			name:    "bad reference inside an unused default",
			in:      "${HOST:-${1A}}",
			wantErr: `unsupported reference "${1A}": use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _`,
		},
		{
			name:    "other operator around a nested reference",
			in:      "${A-${B}}x",
			wantErr: `unsupported reference "${A-${B}}": use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _`,
		},
		{
			name:    "nested too deep",
			in:      strings.Repeat("${NOPE:-", 17) + "x" + strings.Repeat("}", 17),
			wantErr: `references nest more than 16 deep in the default of ${NOPE:-…}`,
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

// FuzzExpand checks that no input panics or nests without bound, and that
// no problem message ever quotes a looked-up value.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A:-${B:-$$x}}", "${TOKEN", "$${A}", "${A-${B}}", strings.Repeat("${A:-", 40)} {
		f.Add(s)
	}
	lookup := env(map[string]string{"TOKEN": secret, "A": "", "B": secret})
	f.Fuzz(func(t *testing.T, s string) {
		_, err := yamlconf.Expand(s, lookup)
		if err != nil && strings.Contains(err.Error(), secret) && !strings.Contains(s, secret) {
			t.Fatalf("Expand(%q): error quotes a looked-up value: %v", s, err)
		}
	})
}
