package gatewayauth

import (
	"fmt"
	"path"
	"slices"

	"github.com/google/cel-go/cel"
)

// compileWhen compiles a rule's when expression: a CEL boolean over claims
// (the token's claims, a map), subject, groups and tool (the public name
// asked for).
func compileWhen(expr string) (cel.Program, error) {
	env, err := cel.NewEnv(
		cel.Variable("claims", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("subject", cel.StringType),
		cel.Variable("groups", cel.ListType(cel.StringType)),
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
	return env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(10_000))
}

// Policy is a compiled, ordered rule list. The zero Policy (no policy
// configured) allows everything; once rules exist, a name no rule allows
// is denied.
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
	// Line is the deciding rule's line, 0 when no rule matched.
	Line int
}

// Decide returns whether who may use name (a public tool or prompt name,
// or for a Resource its server). The first rule that matches who decides.
func (p *Policy) Decide(who *Principal, kind Target, name string) Decision {
	if p == nil || !p.set {
		return Decision{Allow: true}
	}
	for i := range p.rules {
		r := &p.rules[i]
		if !r.matches(who, name) {
			continue
		}
		globs := r.Allow
		if kind == Resource {
			globs = r.Resources
		}
		return Decision{Allow: anyGlob(globs, name), Line: r.Line}
	}
	return Decision{}
}

func (r *compiled) matches(who *Principal, name string) bool {
	if len(r.Subjects) > 0 && !slices.Contains(r.Subjects, who.Name) {
		return false
	}
	if len(r.Groups) > 0 && !slices.ContainsFunc(r.Groups, func(g string) bool { return slices.Contains(who.Groups, g) }) {
		return false
	}
	if r.when == nil {
		return true
	}
	claims := who.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	out, _, err := r.when.Eval(map[string]any{"claims": claims, "subject": who.Name, "groups": who.Groups, "tool": name})
	if err != nil {
		return false // a claim the expression needs is missing: no match
	}
	b, ok := out.Value().(bool)
	return ok && b
}

func anyGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
