package cli

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentext"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// newAgent builds the loop over the bridge: the model of the run (strict
// calls to DeepSeek's beta endpoint), the tools the view shows plus those
// the person named, approvals, progress on a terminal, the session.
func (r *agentRun) newAgent() error {
	e := r.e
	model := r.cfg.Client(e.lookup, e.HTTPClient, e.logger(r.f))
	model.Retrying = r.reportRetry
	view := r.b.view()
	if view == nil {
		// No tool-search entry: search turns on by itself when the
		// catalog is over the budget (toolview's default).
		v, err := toolview.New(r.b.reg, toolview.Config{})
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		view = v
	}
	opts := agent.Options{
		Model: model, ModelName: r.cfg.Model, StrictModel: model.Beta(), Strict: r.cfg.Strict,
		Registry: r.b.reg, Tools: func() ([]tool.Tool, error) { return r.tools(view) },
		System: systemPrompt, MaxSteps: r.af.maxSteps, SpillDir: r.session.SpillDir(),
		Approver: r.policy(), CallContext: r.callContext, Events: r.out.Event,
		Record: func(m agent.Message) error { return r.session.Append(m) }, // /clear swaps the session
	}
	if r.af.codeMode {
		if err := agentext.CodeMode(&opts); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	} else if skills, err := agentext.Skills(&opts, r.b.reg, r.rules.Permissions); err != nil {
		return fmt.Errorf("agent: %w", err)
	} else if skills {
		r.named[agentext.LoadSkillName] = true // deferred loading never hides it
	}
	ag, err := agent.New(opts)
	if err != nil {
		return err // untested: the options above are complete
	}
	ag.Resume(r.session.Messages())
	r.ag = ag
	return nil
}

// tools are the view's tools and the ones the person named, in the
// registry's order.
func (r *agentRun) tools(view *toolview.View) ([]tool.Tool, error) {
	shown, err := view.Tools()
	if err != nil || len(r.named) == 0 {
		return shown, err
	}
	for _, t := range r.b.reg.List() {
		if r.named[t.Name] && !slices.ContainsFunc(shown, func(s tool.Tool) bool { return s.Name == t.Name }) {
			shown = append(shown, t)
		}
	}
	slices.SortFunc(shown, func(a, b tool.Tool) int { return strings.Compare(a.Name, b.Name) })
	return shown, nil
}

// publicNames finds public tool names in a prompt.
var publicNames = regexp.MustCompile(`mcp__[A-Za-z0-9_-]+`)

// noteNamed pins the tools a prompt names, so deferred loading never
// hides them.
func (r *agentRun) noteNamed(prompt string) {
	for _, n := range publicNames.FindAllString(prompt, -1) {
		if _, ok := r.b.reg.Get(n); ok {
			r.named[n] = true
		}
	}
}

// policy is the run's approvals: --yes approves all; at a terminal the
// person is asked; with -p the rest is denied.
func (r *agentRun) policy() *agent.Policy {
	p := &agent.Policy{All: r.af.yes, Trusted: func(s string) bool { return r.trusted[s] },
		Rules: r.rules.Permissions, Refused: r.refused, Keep: r.keep}
	if !r.af.hasPrompt {
		p.Ask = r.askApproval
	} else if !r.af.yes {
		// Each refused call is told apart: a person reading the notices
		// learns every tool the model wanted, not only the first.
		p.Ask = func(_ context.Context, c agent.Call) (agent.Answer, error) {
			r.out.Event(agent.Event{Type: agent.EventNotice, Text: r.notRun(c)})
			return agent.Deny, nil
		}
	}
	return p
}

// notRun says why c, refused under -p, did not run, and every way to let
// it: --yes, the user config's allow list (with the patterns that fit)
// or, for a read-only tool, trusted: true.
func (r *agentRun) notRun(c agent.Call) string {
	where := "the user config"
	if user := r.e.userConfigPath(); user != "" {
		where = user
	}
	return fmt.Sprintf("tool %s was not run: with -p tools run only with --yes, or when permissions.allow in %s lists them (allow: [%s], or [%q] for every tool of the server), or, read-only ones, from servers marked trusted: true",
		c.Name, where, c.Name, agent.ServerPattern(c.Tool.Origin.Server))
}

// callContext shows a call's progress on a terminal, once no question is
// open (a code-mode program's call runs while the next is asked about).
func (r *agentRun) callContext(ctx context.Context, c agent.Call) context.Context {
	if !r.e.StderrIsTerminal || r.f.json {
		return ctx
	}
	return tool.WithProgress(ctx, func(p tool.Progress) {
		line := fmt.Sprintf("%s %s", termsafe.Line(c.Name), progressText(p))
		r.e.term.showProgress(func() { r.out.Progress(line) }, nil) // Output erases it itself
	})
}

// reportRetry says that the model's API failed and when it is tried
// again: a busy API can keep a turn waiting for minutes, which without
// a word looks like a hang.
func (r *agentRun) reportRetry(attempt, attempts int, wait time.Duration, err error) {
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf(
		"the model's API failed (%v); trying again in %v, attempt %d of %d", err, wait, attempt+1, attempts)})
}
