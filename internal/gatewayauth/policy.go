package gatewayauth

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/mcpbridge/mcpbridge/internal/naming"
)

// compileWhen compiles a rule's when expression: a CEL boolean over claims
// (the token's claims, a map), subject, groups, scopes (the token's, each
// whole: a scope string's contains would take "nonadmin" for "admin") and
// tool (the public name asked for, or a resource's server prefix:
// whenTool).
func compileWhen(expr string) (cel.Program, error) {
	return whenProgram(expr, cel.OptOptimize)
}

// whenCost bounds one evaluation of a when expression.
const whenCost = 10_000

// whenProgram compiles expr, a when expression, evaluated with opts.
func whenProgram(expr string, opts cel.EvalOption) (cel.Program, error) {
	env, err := cel.NewEnv(
		cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("subject", cel.StringType),
		cel.Variable("groups", cel.ListType(cel.StringType)),
		cel.Variable("scopes", cel.ListType(cel.StringType)),
		cel.Variable("tool", cel.StringType),
	)
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("it is a %s, want a bool", ast.OutputType())
	}
	return env.Program(ast, cel.EvalOptions(opts), cel.CostLimit(whenCost))
}

// Policy is a compiled, ordered rule list. The zero Policy (no policy
// configured) allows everything; once rules exist, a name no rule allows
// is denied.
//
// Deny comes first: a name that a deny glob of any rule matching the
// caller covers is refused, wherever that rule stands in the list (to
// exempt someone, narrow the deny rule's subjects, groups or when). Then
// the first matching rule that grants (one with allow, prompts or
// resources, or with no deny at all) decides; a rule with only deny never
// does, so a deny rule for everyone can stand first without hiding the
// rest.
type Policy struct {
	set   bool
	rules []compiled
}

type compiled struct {
	Rule
	when cel.Program
}

// NewPolicy compiles rules (already checked by Decode); set reports that a
// policy was configured at all.
func NewPolicy(rules []Rule, set bool) (*Policy, error) {
	p := &Policy{set: set}
	for _, r := range rules {
		c := compiled{Rule: r}
		if r.When != "" {
			prg, err := compileWhen(r.When)
			if err != nil {
				return nil, fmt.Errorf("policy rule at line %d: when: %w", r.Line, err)
			}
			c.when = prg
		}
		p.rules = append(p.rules, c)
	}
	return p, nil
}

// Target says what is asked for: a tool or prompt by public name, or a
// resource by server.
type Target int

const (
	Tool Target = iota
	Prompt
	Resource
)

// Decision is the policy's answer and the rule behind it.
type Decision struct {
	Allow bool
	// Line is the deciding rule's line (the denying rule's, for a deny),
	// 0 when no rule matched.
	Line int
	// Denied says a deny glob refused it, whatever the rules allow.
	Denied bool
}

// Decide returns whether who may use name (a public tool or prompt name,
// or for a Resource its server): refused by any matching rule's deny,
// else decided by the first matching rule that grants.
func (p *Policy) Decide(who *Principal, kind Target, name string) Decision {
	if p == nil || !p.set {
		return Decision{Allow: true}
	}
	tool := whenTool(kind, name)
	for i := range p.rules {
		r := &p.rules[i]
		// The glob first: it is cheap, and most rules deny nothing.
		if r.Deny != nil && covers(r.Deny, kind, name) && r.matches(who, tool, true) {
			return Decision{Line: r.Line, Denied: true}
		}
	}
	for i := range p.rules {
		r := &p.rules[i]
		if r.DenyOnly() || !r.matches(who, tool, false) {
			continue
		}
		return Decision{Allow: r.grants(kind, name), Line: r.Line}
	}
	return Decision{}
}

// whenTool is the tool a when expression sees: the public name asked for,
// or for a resource its server's prefix, "mcp__SERVER__", with which every
// public name of the server starts, so a when written over a server's
// tools covers its resources as a deny glob over them does (coversServer).
func whenTool(kind Target, name string) string {
	if kind == Resource {
		return naming.Public(name, "")
	}
	return name
}

// grants reports whether the rule's own lists let its callers use name.
func (r *compiled) grants(kind Target, name string) bool {
	switch {
	case kind == Prompt && r.Prompts != nil:
		return anyGlob(r.Prompts, name)
	case kind == Resource && r.Resources != nil:
		return anyGlob(r.Resources, name)
	}
	return covers(r.Allow, kind, name)
}

// covers reports whether globs over public names cover name: a tool's or
// prompt's by a glob matching it, a server's resources by a glob that
// covers every name of the server.
func covers(globs []string, kind Target, name string) bool {
	if kind != Resource {
		return anyGlob(globs, name)
	}
	return slices.ContainsFunc(globs, func(g string) bool { return coversServer(g, name) })
}

// coversServer reports whether glob matches every public name of server:
// it ends in "*" and matches the names' common start, "mcp__SERVER__", so
// its last "*" takes whatever follows ("*", "mcp__*", "mcp__docs__*"; not
// "mcp__docs__get_*"). Public names hold no "/", which "*" would stop at.
func coversServer(glob, server string) bool {
	if !strings.HasSuffix(glob, "*") {
		return false
	}
	ok, _ := path.Match(glob, naming.Public(server, ""))
	return ok
}

// matches reports whether the rule applies to who asking for tool (as
// whenTool gives it); failed is the answer when its when expression fails
// at run time (a claim it reads is missing): false for a grant, which
// then does not apply, true for a deny, which then still does, so a token
// cannot escape a deny by leaving out the claim it tests.
func (r *compiled) matches(who *Principal, tool string, failed bool) bool {
	// A nil list was not given; an empty one names no one.
	if r.Subjects != nil && !slices.Contains(r.Subjects, who.Name) {
		return false
	}
	if r.Groups != nil && !slices.ContainsFunc(r.Groups, func(g string) bool { return slices.Contains(who.Groups, g) }) {
		return false
	}
	if r.when == nil {
		return true
	}
	claims := who.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	out, _, err := r.when.Eval(map[string]any{"claims": claims, "subject": who.Name, "groups": who.Groups, "scopes": who.Scopes, "tool": tool})
	if err != nil {
		return failed
	}
	b, ok := out.Value().(bool)
	if !ok {
		return failed
	}
	return b
}

func anyGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Warning is a class of offers a rule hides from all its callers, which
// its writer may not have meant: to be logged once, when the policy is
// applied, never per request.
type Warning struct {
	Line    int    // the rule's line
	Callers string // whom: "every caller", "subjects alice, bob", ...
	Msg     string // what is hidden, and how to grant it
}

// Reach is who may call and what names there are where a policy is taken
// into use, as far as is known before any call: what Warnings checks the
// rules against. The zero Reach knows nothing, so no rule is out of it.
type Reach struct {
	// Subjects, when not nil, are every subject a caller can have
	// (Callers); nil: any.
	Subjects []string
	// NoGroups says no caller can have groups (no issuer: only a JWT's
	// claims give them).
	NoGroups bool
	// Builtin are the gateway's own tool names (search_tools, code
	// mode's), the public names that do not start with mcp__.
	Builtin []string
}

// Callers is the subjects a caller can have under cfg: over stdio the
// local user "stdio"; over HTTP a static token's name, "bearer" for
// serve's --token-env token (bearer), or "anonymous" with neither; nil
// (any) with an issuer, whose tokens name their own.
func Callers(cfg Config, stdio, bearer bool) []string {
	switch {
	case stdio:
		return []string{stdioName}
	case cfg.Auth.JWT():
		return nil
	case len(cfg.Auth.Tokens) == 0 && !bearer:
		return []string{"anonymous"}
	}
	out := slices.Sorted(maps.Keys(cfg.Auth.Tokens))
	if bearer {
		out = append(out, bearerName)
	}
	return out
}

// Warnings lists what p hides from whole classes of callers without a
// list saying so: a rule that grants tools but, with no resources of its
// own, covers no server (its callers read no resource), and a deny that
// covers every server's names (its callers get none of their tools,
// prompts or resources). An empty resources or prompts list says it, and
// is not warned about. It lists too what can never match in reach: a
// rule no caller can meet, and a glob that matches no public name.
func (p *Policy) Warnings(reach Reach) []Warning {
	if p == nil {
		return nil
	}
	var out []Warning
	for i := range p.rules {
		r := &p.rules[i].Rule
		switch {
		case slices.ContainsFunc(r.Deny, coversEveryServer):
			out = append(out, Warning{r.Line, r.callers(), "denies every tool, prompt and resource of every server"})
		case len(r.Allow) > 0 && r.Resources == nil && !slices.ContainsFunc(r.Allow, coversSomeServer):
			out = append(out, Warning{r.Line, r.callers(), "grants tools but no resource: no allow glob covers a whole server " +
				`(such as "mcp__SERVER__*"); list the servers whose resources its callers may read in resources:, or write resources: [] to mean none`})
		}
		out = append(out, r.unreachable(reach)...)
	}
	return out
}

// unreachable warns of what in r can never match in reach: its subjects
// or groups, which no caller can have, its when, which holds for none,
// and each glob that matches no public name.
func (r *Rule) unreachable(reach Reach) []Warning {
	var out []Warning
	callers := reach.Subjects // those the rule may apply to
	if reach.Subjects != nil && r.Subjects != nil {
		callers = slices.DeleteFunc(slices.Clone(r.Subjects), func(s string) bool { return !slices.Contains(reach.Subjects, s) })
	}
	if reach.Subjects != nil && r.Subjects != nil && len(callers) == 0 {
		out = append(out, Warning{r.Line, r.callers(), fmt.Sprintf("never applies: no caller here has any of its subjects; the callers are %s "+
			`(a static token's name, "bearer" for --token-env, "anonymous" over HTTP without auth, "stdio" over serve --stdio; a JWT's sub needs auth.issuer)`,
			strings.Join(reach.Subjects, ", "))})
	}
	noGroups := reach.NoGroups && r.Groups != nil
	if noGroups {
		out = append(out, Warning{r.Line, r.callers(), "never applies: no caller here has groups, which only a JWT's groups claim gives (auth.issuer)"})
	}
	if reach.Subjects == nil || len(callers) > 0 && !noGroups {
		if why := r.whenNever(reach, callers); why != "" {
			out = append(out, Warning{r.Line, r.callers(), "never applies: " + why})
		}
	}
	for _, list := range []struct {
		key   string
		globs []string
	}{{"allow", r.Allow}, {"prompts", r.Prompts}, {"deny", r.Deny}} {
		for _, g := range list.globs {
			if !mayMatchPublic(g) && !slices.Contains(reach.Builtin, g) {
				out = append(out, Warning{r.Line, r.callers(), fmt.Sprintf(`%s: %q matches no name: policies match public names, mcp__SERVER__NAME (under --raw-names too); write "mcp__SERVER__%s", or "mcp__*__%s" for every server's`,
					list.key, g, g, g)})
			}
		}
	}
	return out
}

// whenNever says why r's when holds for no caller in reach, "" when one
// may meet it. Whatever the caller and tool (each unknown), it is false;
// or, where no caller has claims or groups (no issuer: reach.NoGroups),
// it is false for each of callers (the rule's subjects among reach's),
// the tool unknown. An evaluation that fails counts as false, but for a
// rule that denies, which then applies (matches).
func (r *Rule) whenNever(reach Reach, callers []string) string {
	if r.When == "" {
		return ""
	}
	prg, err := whenProgram(r.When, cel.OptPartialEval)
	if err != nil {
		return "" // Decode compiled it: it does not fail here
	}
	if r.falseFor(prg, map[string]any{}, "claims", "subject", "groups", "scopes", "tool") {
		return "its when is false whatever the caller and tool"
	}
	if !reach.NoGroups || reach.Subjects == nil {
		return ""
	}
	for _, s := range callers {
		if !r.falseFor(prg, map[string]any{"claims": map[string]any{}, "subject": s, "groups": []string{}, "scopes": []string{}}, "tool") {
			return ""
		}
	}
	return fmt.Sprintf("its when holds for none of the callers here (%s, none of whom has claims or groups: only a JWT carries them, with auth.issuer)",
		strings.Join(callers, ", "))
}

// falseFor reports whether prg, r's when, does not match with vars, the
// variables named unknown left unknown: it is false, or it fails (or is
// no bool) and r denies nothing (matches' failed).
func (r *Rule) falseFor(prg cel.Program, vars map[string]any, unknown ...string) bool {
	patterns := make([]*cel.AttributePatternType, len(unknown))
	for i, name := range unknown {
		patterns[i] = cel.AttributePattern(name)
	}
	act, err := cel.PartialVars(vars, patterns...)
	if err != nil {
		return false
	}
	out, _, err := prg.Eval(act)
	switch {
	case err != nil:
		return r.Deny == nil
	case types.IsUnknown(out):
		return false
	}
	b, ok := out.Value().(bool)
	if !ok {
		return r.Deny == nil
	}
	return !b
}

// UnlistedWarnings lists the rules that grant tools but none of listed,
// the only tools sessions list (code mode's): their callers list no tool
// yet may call by name the tools the rule grants. None without listed.
func (p *Policy) UnlistedWarnings(listed []string) []Warning {
	if p == nil || len(listed) == 0 {
		return nil
	}
	var out []Warning
	for i := range p.rules {
		r := &p.rules[i].Rule
		if len(r.Allow) > 0 && !slices.ContainsFunc(listed, func(name string) bool { return anyGlob(r.Allow, name) }) {
			out = append(out, Warning{r.Line, r.callers(), "grants tools but none of " + strings.Join(listed, ", ") +
				", the only tools sessions list: its callers list no tool, yet call by name the tools it grants; add run_code (with describe_api and search_api) to its allow to let them run programs"})
		}
	}
	return out
}

// Way is how serve may run a config: over stdio or HTTP, with
// --token-env's token or without.
type Way struct{ Stdio, Bearer bool }

// AnyWay is every way serve may run a config, for validate, which knows
// neither.
var AnyWay = []Way{{Stdio: true}, {Bearer: true}, {}}

// ReachOf is the Reach of cfg run in any of ways, with the gateway's own
// tool names builtin: a caller that can call in one of them is in reach.
func ReachOf(cfg Config, builtin []string, ways ...Way) Reach {
	r := Reach{Builtin: builtin, NoGroups: true, Subjects: []string{}}
	for _, w := range ways {
		subjects := Callers(cfg, w.Stdio, w.Bearer)
		if subjects == nil || r.Subjects == nil {
			r.Subjects = nil
		} else {
			r.Subjects = append(r.Subjects, subjects...)
		}
		r.NoGroups = r.NoGroups && (w.Stdio || !cfg.Auth.JWT())
	}
	return r
}

// mayMatchPublic reports whether glob may match a public name of a
// server's: what it matches literally before its first wildcard (or
// escape) starts "mcp__", or is where such a name starts.
func mayMatchPublic(glob string) bool {
	lit := glob[:strings.IndexAny(glob+"*", `*?[\`)]
	return strings.HasPrefix(lit, "mcp__") || strings.HasPrefix("mcp__", lit)
}

// coversEveryServer reports whether glob covers every server's names:
// two servers that no literal part of a glob names alike stand for all.
func coversEveryServer(glob string) bool {
	return coversServer(glob, "a") && coversServer(glob, "Z-9")
}

// coversSomeServer reports whether glob covers the names of any server:
// one that its literal part names ("mcp__docs__*" names docs), or any
// one when its literal part ends before a server is named.
func coversSomeServer(glob string) bool {
	lit := glob[:strings.IndexAny(glob+"*", `*?[\`)]
	server := "a"
	if rest, ok := strings.CutPrefix(lit, "mcp__"); ok && rest != "" {
		server, _, _ = strings.Cut(rest, "__")
	}
	return coversServer(glob, server)
}

// callers says whom the rule applies to.
func (r *Rule) callers() string {
	var parts []string
	if len(r.Subjects) > 0 {
		parts = append(parts, "subjects "+strings.Join(r.Subjects, ", "))
	}
	if len(r.Groups) > 0 {
		parts = append(parts, "groups "+strings.Join(r.Groups, ", "))
	}
	if r.When != "" {
		parts = append(parts, "when "+r.When)
	}
	if len(parts) == 0 {
		return "every caller"
	}
	return strings.Join(parts, "; ")
}
