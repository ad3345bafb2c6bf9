package cli

import (
	"errors"
	"fmt"
	"strings"
)

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// flags are the options every command understands. Flags may stand anywhere
// on the line (the conformance suite appends the server URL after them);
// "--" ends them.
type flags struct {
	config   string
	url      string
	name     string
	headers  []string
	json     bool
	verbose  bool
	help     bool
	timings  bool
	stdio    bool
	http     bool   // --http given
	httpAddr string // its address, "" for the default
	tokenEnv string // --token-env: the variable holding the bearer token
	insecure bool   // --insecure-no-auth-on-network
	origins  []string
	args     []string // positional arguments
}

// flagSpec says which flags a command accepts.
type flagSpec struct {
	source  bool // --config, --url, --name, --header
	config  bool // --config alone
	json    bool
	timings bool
	serve   bool // --stdio, --http
}

func parseFlags(cmd string, spec flagSpec, argv []string) (*flags, error) {
	f := &flags{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			f.args = append(f.args, argv[i+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			f.args = append(f.args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(argv) {
				return "", usagef("%s: flag --%s needs a value", cmd, name)
			}
			i++
			return argv[i], nil
		}
		var err error
		switch {
		case name == "h" || name == "help":
			f.help = true
		case name == "v" || name == "verbose":
			f.verbose = true
		case name == "json" && spec.json:
			f.json = true
		case name == "timings" && spec.timings:
			f.timings = true
		case name == "config" && (spec.source || spec.config):
			f.config, err = takeValue()
		case name == "url" && spec.source:
			f.url, err = takeValue()
		case name == "name" && spec.source:
			f.name, err = takeValue()
		case name == "header" && spec.source:
			var h string
			h, err = takeValue()
			f.headers = append(f.headers, h)
		case name == "stdio" && spec.serve:
			f.stdio = true
		case name == "http" && spec.serve:
			// The address is optional: --http alone serves on the default.
			f.http = true
			if hasValue {
				f.httpAddr = value
			} else if i+1 < len(argv) && strings.Contains(argv[i+1], ":") && !strings.HasPrefix(argv[i+1], "-") {
				i++
				f.httpAddr = argv[i]
			}
		case name == "token-env" && spec.serve:
			f.tokenEnv, err = takeValue()
		case name == "allow-origin" && spec.serve:
			var o string
			o, err = takeValue()
			f.origins = append(f.origins, o)
		case name == "insecure-no-auth-on-network" && spec.serve:
			f.insecure = true
		default:
			return nil, usagef("%s: unknown flag %s (see 'mcpbridge help')", cmd, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if f.config != "" && f.url != "" {
		return nil, usagef("%s: --config and --url cannot be used together", cmd)
	}
	if f.url == "" && (f.name != "" || len(f.headers) > 0) {
		return nil, usagef("%s: --name and --header go with --url", cmd)
	}
	return f, nil
}

// parseHeaders turns "K: V" strings into a map.
func parseHeaders(hs []string) (map[string]string, error) {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, usagef("--header %q: want 'Name: value'", h)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
