package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
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
	tokens   bool // --tokens (tools)
	stdio    bool
	http     bool   // --http given
	httpAddr string // its address, "" for the default
	tokenEnv string // --token-env: the variable holding the bearer token
	insecure bool   // --insecure-no-auth-on-network
	origins  []string
	rawNames bool   // --raw-names
	codeMode bool   // serve --code-mode
	console  bool   // --console
	server   string // --server: the server to read a resource from
	elicit   string // --elicit: decline, cancel or defaults
	// oauthHeadless is --oauth-headless: authorize without a browser.
	oauthHeadless bool
	// readyTimeout is --ready-timeout as given ("" when absent).
	readyTimeout string
	ops          opsFlags // --log-format, --metrics-addr, --stateless (observe.go)
	env          []string // --env K=V (add)
	transport    string   // --transport (add)
	scope        string   // --scope (add, remove)
	callArgs     []string // --arg K=V (call, prompt)
	timeout      string   // --timeout D (call), as given
	limit        string   // --limit K (search: cutLimit takes it first)
	saveDir      string   // --save-dir (call)
	diff         bool     // --diff (pin)
	after        string   // --after HASH (audit verify)
	task         bool     // --task (call): optional task tools as tasks
	fromRegistry string   // --from-registry NAME[@VERSION] or FILE (add)
	pkg          string   // --package TYPE (add --from-registry)
	remote       string   // --remote N (add --from-registry), as given
	args         []string // positional arguments
}

// flagSpec says which flags a command accepts.
type flagSpec struct {
	source  bool // --config, --url, --name, --header
	config  bool // --config alone
	json    bool
	timings bool
	tokens  bool // --tokens
	serve   bool // --stdio, --http
	edit    bool // add: --url, --header, --env, --transport
	save    bool // call: --save-dir, --timeout
	arg     bool // --arg K=V (call, prompt)
	server  bool // --server (read)
	diff    bool // --diff (pin)
	scope   bool // --scope (add, remove)
	limit   bool // --limit (search)
	after   bool // --after (audit verify)
	agent   bool // agent: -p, --yes, --model, … (cutAgentFlags takes them first)
	task    bool // --task (call)
	reg     bool // add: --from-registry, --package, --remote
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
		used, err := parseFlag(cmd, spec, f, a, argv[i+1:])
		if err != nil {
			return nil, err
		}
		i += used
	}
	if !spec.source {
		return f, nil // --url of add is no SOURCE
	}
	if err := checkSourceFlags(cmd, f); err != nil {
		return nil, err
	}
	if err := checkOpsFlags(cmd, f); err != nil {
		return nil, err
	}
	if err := checkElicitMode(f.elicit); err != nil {
		return nil, err
	}
	return f, nil
}

// parseFlag applies the flag argument a ("--name", "-name" or
// "--name=value") to f. A flag without "=value" that needs one takes it
// from rest; parseFlag returns how many arguments of rest it took.
func parseFlag(cmd string, spec flagSpec, f *flags, a string, rest []string) (int, error) {
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	def, ok := lookupFlag(name, spec)
	if !ok {
		return 0, unknownFlag(cmd, a, name, spec)
	}
	u := &flagUse{cmd: cmd, name: name, value: value, hasValue: hasValue, rest: rest}
	err := def.apply(f, u)
	return u.used, err
}

// checkSourceFlags checks that the SOURCE flags go together.
func checkSourceFlags(cmd string, f *flags) error {
	if f.config != "" && f.url != "" {
		return usagef("%s: --config and --url cannot be used together", cmd)
	}
	if f.url == "" && (f.name != "" || len(f.headers) > 0) {
		return usagef("%s: --name and --header go with --url", cmd)
	}
	return nil
}

// flagUse is one flag on the command line, as its flagDef sees it.
type flagUse struct {
	cmd      string
	name     string // without dashes and "=value"
	value    string // after "="
	hasValue bool   // "=" was given
	rest     []string
	used     int // how many of rest the flag took
}

// take returns the flag's value: after "=", else the next argument.
func (u *flagUse) take() (string, error) {
	if u.hasValue {
		return u.value, nil
	}
	if len(u.rest) == 0 {
		return "", usagef("%s: flag --%s needs a value", u.cmd, u.name)
	}
	u.used = 1
	return u.rest[0], nil
}

// optional returns the flag's value after "=", else the next argument when
// it looks like a value (is), else "".
func (u *flagUse) optional(is func(string) bool) string {
	if u.hasValue {
		return u.value
	}
	if len(u.rest) > 0 && is(u.rest[0]) {
		u.used = 1
		return u.rest[0]
	}
	return ""
}

// flagDef is one flag: its names, which commands accept it, and what it
// sets.
type flagDef struct {
	names  []string
	accept func(flagSpec) bool
	apply  func(*flags, *flagUse) error
	// value names the flag's value in completions ("FILE", "DIR" complete
	// file names); "" for a flag that takes none (or only after "=").
	value string
	// once: the flag holds one value, so a second use is refused
	// (refuseRepeats) rather than replacing the first in silence.
	once bool
}

// flagDefs are every command's flags.
func flagDefs() []flagDef {
	anyCommand := func(flagSpec) bool { return true }
	source := func(s flagSpec) bool { return s.source }
	edit := func(s flagSpec) bool { return s.edit }
	serve := func(s flagSpec) bool { return s.serve }
	agentFlag := func(s flagSpec) bool { return s.agent }
	fromReg := func(s flagSpec) bool { return s.reg }
	return []flagDef{
		{[]string{"h", "help"}, anyCommand, setTrue(func(f *flags) *bool { return &f.help }), "", false},
		{[]string{"v", "verbose"}, anyCommand, setTrue(func(f *flags) *bool { return &f.verbose }), "", false},
		{[]string{"json"}, func(s flagSpec) bool { return s.json }, setTrue(func(f *flags) *bool { return &f.json }), "", false},
		{[]string{"timings"}, func(s flagSpec) bool { return s.timings }, setTrue(func(f *flags) *bool { return &f.timings }), "", false},
		{[]string{"tokens"}, func(s flagSpec) bool { return s.tokens }, setTrue(func(f *flags) *bool { return &f.tokens }), "", false},
		{[]string{"config"}, func(s flagSpec) bool { return s.source || s.config }, setValue(func(f *flags) *string { return &f.config }), "FILE", true},
		{[]string{"url"}, func(s flagSpec) bool { return s.source || s.edit }, setValue(func(f *flags) *string { return &f.url }), "URL", true},
		{[]string{"name"}, source, setValue(func(f *flags) *string { return &f.name }), "NAME", true},
		{[]string{"header", "H"}, func(s flagSpec) bool { return s.source || s.edit }, appendValue(func(f *flags) *[]string { return &f.headers }), "'K: V'", false},
		{[]string{"env", "e"}, edit, appendValue(func(f *flags) *[]string { return &f.env }), "K=V", false},
		{[]string{"scope", "s"}, func(s flagSpec) bool { return s.scope }, setValue(func(f *flags) *string { return &f.scope }), "S", true},
		{[]string{"transport"}, edit, setValue(func(f *flags) *string { return &f.transport }), "T", true},
		{[]string{"save-dir"}, func(s flagSpec) bool { return s.save }, setValue(func(f *flags) *string { return &f.saveDir }), "DIR", true},
		{[]string{"arg"}, func(s flagSpec) bool { return s.arg }, appendValue(func(f *flags) *[]string { return &f.callArgs }), "K=V", false},
		{[]string{"timeout"}, func(s flagSpec) bool { return s.save }, setValue(func(f *flags) *string { return &f.timeout }), "D", true},
		{[]string{"oauth-headless"}, source, setTrue(func(f *flags) *bool { return &f.oauthHeadless }), "", false},
		{[]string{"stdio"}, serve, setTrue(func(f *flags) *bool { return &f.stdio }), "", false},
		{[]string{"http"}, serve, setHTTP, "", true},
		{[]string{"token-env"}, serve, setValue(func(f *flags) *string { return &f.tokenEnv }), "NAME", true},
		{[]string{"allow-origin"}, serve, appendValue(func(f *flags) *[]string { return &f.origins }), "ORIGIN", false},
		{[]string{"insecure-no-auth-on-network"}, serve, setTrue(func(f *flags) *bool { return &f.insecure }), "", false},
		{[]string{"raw-names"}, serve, setTrue(func(f *flags) *bool { return &f.rawNames }), "", false},
		{[]string{"console"}, serve, setTrue(func(f *flags) *bool { return &f.console }), "", false},
		{[]string{"ready-timeout"}, serve, setValue(func(f *flags) *string { return &f.readyTimeout }), "D", true},
		{[]string{"log-format"}, anyCommand, setValue(func(f *flags) *string { return &f.ops.logFormat }), "FORMAT", true},
		{[]string{"metrics-addr"}, serve, setValue(func(f *flags) *string { return &f.ops.metricsAddr }), "ADDR", true},
		{[]string{"stateless"}, serve, setTrue(func(f *flags) *bool { return &f.ops.stateless }), "", false},
		{[]string{"server"}, func(s flagSpec) bool { return s.server }, setValue(func(f *flags) *string { return &f.server }), "NAME", true},
		{[]string{"elicit"}, source, setValue(func(f *flags) *string { return &f.elicit }), "MODE", true},
		{[]string{"limit"}, func(s flagSpec) bool { return s.limit }, setValue(func(f *flags) *string { return &f.limit }), "K", true}, // taken out by cutLimit; listed for help and completion
		{[]string{"diff"}, func(s flagSpec) bool { return s.diff }, setTrue(func(f *flags) *bool { return &f.diff }), "", false},
		{[]string{"after"}, func(s flagSpec) bool { return s.after }, setValue(func(f *flags) *string { return &f.after }), "HASH", true},
		{[]string{"p", "prompt"}, agentFlag, cutEarlier, "PROMPT", true},
		{[]string{"y", "yes"}, agentFlag, cutEarlier, "", false},
		{[]string{"model"}, agentFlag, cutEarlier, "M", true},
		{[]string{"base-url"}, agentFlag, cutEarlier, "URL", true},
		{[]string{"max-steps"}, agentFlag, cutEarlier, "N", true},
		{[]string{"resume"}, agentFlag, cutEarlier, "ID", true},
		{[]string{"continue"}, agentFlag, cutEarlier, "", false},
		{[]string{"code-mode"}, agentFlag, cutEarlier, "", false},
		{[]string{"code-mode"}, serve, setTrue(func(f *flags) *bool { return &f.codeMode }), "", false},
		{[]string{"task"}, func(s flagSpec) bool { return s.task }, setTrue(func(f *flags) *bool { return &f.task }), "", false},
		{[]string{"from-registry"}, fromReg, setValue(func(f *flags) *string { return &f.fromRegistry }), "NAME", true},
		{[]string{"package"}, fromReg, setValue(func(f *flags) *string { return &f.pkg }), "TYPE", true},
		{[]string{"remote"}, fromReg, setValue(func(f *flags) *string { return &f.remote }), "N", true},
	}
}

// lookupFlag returns the flag called name, if spec's command accepts it.
func lookupFlag(name string, spec flagSpec) (flagDef, bool) {
	for _, def := range flagDefs() {
		if slices.Contains(def.names, name) && def.accept(spec) {
			return def, true
		}
	}
	return flagDef{}, false
}

// unknownFlag is the error of a flag a (named name) that cmd does not
// take: the nearest one it does, and where its flags are listed.
func unknownFlag(cmd, a, name string, spec flagSpec) error {
	var names []string
	for _, def := range flagDefs() {
		if def.accept(spec) {
			names = append(names, def.names...)
		}
	}
	if near := yamlconf.Suggest(name, names); near != "" {
		return usagef("%s: unknown flag %s: did you mean --%s? (see 'mcpbridge help %s')", cmd, a, near, cmd)
	}
	return usagef("%s: unknown flag %s (see 'mcpbridge help %s')", cmd, a, cmd)
}

// refuseRepeats refuses a flag of cmd that holds one value (flagDef.once)
// given twice in argv, before any of cmd's parsers (parseFlags, and those
// that take flags off the line first: cutAgentFlags, cutLimit) keeps the
// last one. Switches given twice, and repeatable flags, pass; so do flags
// cmd does not take, which its parser names.
func refuseRepeats(cmd string, argv []string) error {
	spec := specOf(cmd)
	seen := map[string]flagSeen{}
	for i := 0; i < len(argv) && argv[i] != "--"; i++ {
		a := argv[i]
		if a == "-" || !strings.HasPrefix(a, "-") {
			continue
		}
		as, value, hasValue := strings.Cut(a, "=")
		def, ok := lookupFlag(strings.TrimLeft(as, "-"), spec)
		if !ok || !def.once {
			continue
		}
		if !hasValue && i+1 < len(argv) && (def.value != "" || !strings.HasPrefix(argv[i+1], "-")) {
			value = argv[i+1]
			if def.value != "" {
				i++ // the value may look like a flag: it is the value
			}
		}
		key := def.names[0]
		if first, ok := seen[key]; ok {
			return usagef("%s: flag %s given twice, as %s and as %s: it takes one value, so give it once",
				cmd, longName(def), first, flagSeen{as, value})
		}
		seen[key] = flagSeen{as: as, value: value}
	}
	return nil
}

// flagSeen is a use of a flag on the line: as written, and its value.
type flagSeen struct{ as, value string }

func (s flagSeen) String() string {
	if s.value == "" {
		return s.as + " alone"
	}
	return fmt.Sprintf("%s %q", s.as, s.value)
}

// longName is "--" and def's longest name, as a message names the flag.
func longName(def flagDef) string {
	long := def.names[0]
	for _, n := range def.names {
		if len(n) > len(long) {
			long = n
		}
	}
	return "--" + long
}

// cutEarlier is the apply of a flag that its command takes off the line
// before parseFlags (the agent's, by cutAgentFlags): such a flag is in
// flagDefs for help and completion, and never reaches parseFlags.
func cutEarlier(_ *flags, u *flagUse) error {
	return usagef("%s: flag --%s is not understood here", u.cmd, u.name)
}

// setTrue makes a boolean flag. A value after "=" is refused: read as
// "on" whatever it said, --json=false would turn JSON on.
func setTrue(field func(*flags) *bool) func(*flags, *flagUse) error {
	return func(f *flags, u *flagUse) error {
		if u.hasValue {
			return usagef("%s: flag --%s takes no value (give it alone, or leave it out)", u.cmd, u.name)
		}
		*field(f) = true
		return nil
	}
}

// setValue makes a flag that takes a value.
func setValue(field func(*flags) *string) func(*flags, *flagUse) error {
	return func(f *flags, u *flagUse) error {
		v, err := u.take()
		*field(f) = v
		return err
	}
}

// appendValue makes a repeatable flag that takes a value.
func appendValue(field func(*flags) *[]string) func(*flags, *flagUse) error {
	return func(f *flags, u *flagUse) error {
		v, err := u.take()
		*field(f) = append(*field(f), v)
		return err
	}
}

// setHTTP is --http: the address is optional, so --http alone serves on the
// default, and a next argument is taken only when it looks like an address.
func setHTTP(f *flags, u *flagUse) error {
	f.http = true
	f.httpAddr = u.optional(func(s string) bool {
		return strings.Contains(s, ":") && !strings.HasPrefix(s, "-")
	})
	return nil
}

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}
