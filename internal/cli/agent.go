package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/agentsession"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	modelkind "github.com/mcpbridge/mcpbridge/internal/kinds/model"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
	"github.com/mcpbridge/mcpbridge/internal/termio"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// ExitMaxSteps is agent's exit status when --max-steps ended the run.
const ExitMaxSteps = 3

// maxPromptBytes bounds a prompt read from stdin (-p -).
const maxPromptBytes = 16 << 20

// systemPrompt is what the agent's model is told first.
const systemPrompt = "You are mcpbridge's agent. The tools are MCP servers' tools under their public names " +
	"(mcp__<server>__<tool>); use them to do the user's task, several at once when they do not depend on each other, " +
	"and answer concisely. When search_tools is offered, search it for tools you need that you do not see."

// agentFlags are the flags only agent takes.
type agentFlags struct {
	prompt    string
	hasPrompt bool
	yes       bool
	model     string
	baseURL   string
	maxSteps  int
	resume    string
	cont      bool
	codeMode  bool
}

// cutAgentFlags takes agent's own flags out of argv (as search does
// --limit), leaving the common ones for parseFlags.
func cutAgentFlags(argv []string) (*agentFlags, []string, error) {
	af := &agentFlags{}
	var rest []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			rest = append(rest, argv[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		take := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(argv) {
				return "", usagef("agent: flag %s needs a value", a)
			}
			i++
			return argv[i], nil
		}
		ours, err := af.set(a, name, hasValue, take)
		if err != nil {
			return nil, nil, err
		}
		if !ours {
			rest = append(rest, a)
		}
	}
	if af.resume != "" && af.cont {
		return nil, nil, usagef("agent: --resume and --continue cannot be used together")
	}
	return af, rest, nil
}

// set applies the flag a (named name) when it is one of agent's own, and
// reports whether it was. A switch given a value is refused: --yes=false
// must not approve every call.
func (af *agentFlags) set(a, name string, hasValue bool, take func() (string, error)) (ours bool, err error) {
	switch name {
	case "y", "yes":
		af.yes, err = true, noValue(a, hasValue)
	case "continue":
		af.cont, err = true, noValue(a, hasValue)
	case "code-mode":
		af.codeMode, err = true, noValue(a, hasValue)
	case "p", "prompt":
		af.prompt, err = take()
		af.hasPrompt = true
	case "model":
		af.model, err = take()
	case "base-url":
		af.baseURL, err = take()
	case "resume":
		af.resume, err = take()
	case "max-steps":
		var v string
		if v, err = take(); err == nil {
			af.maxSteps, err = strconv.Atoi(v)
			if err != nil || af.maxSteps < 1 {
				err = usagef("agent: --max-steps must be a whole number of at least 1, got %q", v)
			}
		}
	default:
		return false, nil
	}
	return true, err
}

// noValue refuses a value given to the switch a.
func noValue(a string, hasValue bool) error {
	if hasValue {
		return usagef("agent: flag %s takes no value", a)
	}
	return nil
}

// agentRun is one agent command: what it was asked and what it opened.
type agentRun struct {
	e       *env
	af      *agentFlags
	f       *flags
	cfg     sampling.Config
	b       *bridge
	session *agent.Session
	ag      *agent.Agent
	out     *agentterm.Output
	trusted map[string]bool
	rules   permkind.Rules // the standing permissions (agent_perms.go)
	user    *host.Plan     // the user config, once read (userPlan)
	// ended is how the last turn at the terminal ended: a session left
	// past the model's context window is not one to resume.
	ended error
	// toldWhereKept: the first question said where "always" is kept.
	toldWhereKept bool
	named         map[string]bool  // tools the person named: always shown
	con           *termio.Console  // interactive: the line editor
	ctrlC         *agentterm.CtrlC // interactive: routes the person's interrupts
}

// agent runs the model with every bridged tool, headless (-p) or at a
// terminal.
func (e *env) agent(ctx context.Context, argv []string) error {
	af, rest, err := cutAgentFlags(argv)
	if err != nil {
		return err
	}
	f, err := parseFlags("agent", specOf("agent"), rest)
	if err != nil {
		return err
	}
	if len(f.args) > 0 {
		return usagef("agent: unexpected argument %q (the prompt goes after -p)", f.args[0])
	}
	interactive := !af.hasPrompt
	if interactive && (!e.StdinIsTerminal || f.json) {
		return e.startFailed(f, usagef("agent: give a prompt with -p PROMPT (or -p - to read it from stdin); without -p stdin must be a terminal, and --json needs -p"))
	}
	prompt, err := e.agentPrompt(af)
	if err != nil {
		return e.startFailed(f, err)
	}
	r := &agentRun{e: e, af: af, f: f, named: map[string]bool{}}
	if err := r.setup(ctx); err != nil {
		return e.startFailed(f, err)
	}
	defer r.close()
	if interactive {
		return r.interactive(ctx)
	}
	return r.headless(ctx, prompt)
}

// startFailed is err, a run that failed before it began, which --json
// also reports as the result line: a script reading stdout learns of it
// there, as of any other failure.
func (e *env) startFailed(f *flags, err error) error {
	if f.json {
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(agent.Event{Type: agent.EventResult, Error: err.Error()})
	}
	return err
}

// agentPrompt is -p's prompt: the text, or stdin for "-".
func (e *env) agentPrompt(af *agentFlags) (string, error) {
	if af.prompt != "-" {
		if af.hasPrompt && strings.TrimSpace(af.prompt) == "" {
			return "", usagef("agent: the prompt of -p is empty")
		}
		return af.prompt, nil
	}
	b, err := io.ReadAll(io.LimitReader(e.Stdin, maxPromptBytes+1))
	if err != nil {
		return "", fmt.Errorf("agent: reading the prompt from stdin: %w", err)
	}
	if len(b) > maxPromptBytes {
		return "", usagef("agent: the prompt on stdin is larger than %d MiB", maxPromptBytes>>20)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usagef("agent: the prompt on stdin is empty")
	}
	return string(b), nil
}

// setup loads the config, settles the model, opens the session and starts
// the servers.
func (r *agentRun) setup(ctx context.Context) error {
	e := r.e
	src, err := e.loadSource(r.f, e.catalog(true))
	if err != nil {
		return err
	}
	if r.cfg, err = r.modelConfig(src); err != nil {
		return err
	}
	if key, _ := e.lookup(r.cfg.APIKeyEnv); key == "" && r.cfg.APIKeyEnv != "" {
		return r.missingKey()
	}
	if r.session, err = r.openSession(); err != nil {
		return err
	}
	r.out = agentterm.NewOutput(e.Stdout, e.Stderr, e.StderrIsTerminal, r.f.json, !r.af.hasPrompt)
	e.term.holdEvents(r.out)
	r.out.Event(agent.Event{Type: agent.EventSession, Session: r.session.ID, Model: r.cfg.Model, Endpoint: r.endpoint()})
	r.warnInClear()
	r.warnKeyElsewhere()
	r.trusted = r.trustedServers(src)
	if err := r.loadPermissions(src); err != nil {
		r.session.Close()
		return err
	}
	if r.b, err = e.open(ctx, src, r.f); err != nil {
		r.session.Close()
		return err
	}
	r.reportFailures()
	r.reportPinNotes()
	return r.newAgent()
}

// reportPinNotes says which definitions the servers withheld or
// published changed (pin: hold, warn), as tools and status do: lines on
// stderr, or notices with --json. A tool withheld is not offered to the
// model; without a word the user would not know why.
func (r *agentRun) reportPinNotes() {
	if !r.f.json {
		r.e.reportPinNotes(r.b)
		return
	}
	lines, _ := r.e.pinNotes(r.b)
	for _, l := range lines {
		r.out.Event(agent.Event{Type: agent.EventNotice, Text: l})
	}
}

// reportFailures says which servers failed: lines on stderr, or notices
// with --json (a script reads those).
func (r *agentRun) reportFailures() {
	if !r.f.json {
		r.e.reportFailures(r.b)
		return
	}
	for _, st := range r.b.failed {
		r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("server %q %s: %s", st.Name, stateText(st.State), st.Err)})
	}
}

// modelConfig is the model of the config's model entry (else its
// sampling entry, else DeepSeek's defaults; see modelPlan) with --model
// and --base-url applied; the source plan's model and sampling entries are
// replaced by one model entry of it, so that servers are sampled through
// the same model.
func (r *agentRun) modelConfig(src *source) (sampling.Config, error) {
	plan, err := r.modelPlan(src)
	if err != nil {
		return sampling.Config{}, err
	}
	cfg, err := modelkind.Configured(plan, r.af.baseURL != "")
	if _, invalid := errors.AsType[*modelkind.InvalidError](err); invalid {
		return cfg, &configError{err}
	}
	if err != nil {
		return cfg, usagef("%v", err)
	}
	if r.af.model != "" {
		cfg.Model = r.af.model
	}
	if r.af.baseURL != "" {
		if problem := chatapi.CheckBaseURL(r.af.baseURL); problem != "" {
			return cfg, usagef("agent: --base-url %s", problem)
		}
		cfg.BaseURL, cfg.BaseURLWritten = r.af.baseURL, r.af.baseURL
	}
	modelkind.Use(src.plan, cfg)
	return cfg, nil
}

// modelPlan is the plan the model is chosen from: the source's, or the
// user config's when the source is another file (--config,
// $MCPBRIDGE_CONFIG, --url) that has no model or sampling entry. The
// model is the person's, as the permissions are: a file of servers must
// not send the conversation to DeepSeek's API in place of the model they
// set up.
func (r *agentRun) modelPlan(src *source) (*host.Plan, error) {
	user := r.e.userConfigPath()
	if user == "" || slices.ContainsFunc(src.plan.Entries, modelkind.IsEntry) ||
		slices.ContainsFunc(src.files, func(f scopes.File) bool { return f.Path == user }) {
		return src.plan, nil
	}
	return r.userPlan(user)
}

// missingKey is the error of a run whose key variable is not set: which
// endpoint would have been sent it and why that one, and the ways on (the
// key, or a model entry for the model meant: a local one takes none).
func (r *agentRun) missingKey() error {
	c := r.cfg
	where := "the user config"
	if user := r.e.userConfigPath(); user != "" {
		where = user
	}
	switch {
	case c.APIKeyEnvNamed:
		return usagef("agent: the API key variable %s, which the model entry names (apiKeyEnv), is not set: export it with the key of %s, or, if that endpoint takes no key, write apiKey: none in the entry instead",
			c.APIKeyEnv, r.endpoint())
	case r.af.baseURL == "" && c.BaseURL == sampling.DefaultBaseURL:
		return usagef("agent: no model entry names an endpoint, nor does --base-url, so the agent would use DeepSeek's API (%s), and its key variable %s is not set: "+
			"export %s=<your DeepSeek key>, or add a model entry for the model you use to %s (a local one, which takes no key: baseURL: http://localhost:11434/v1, model: qwen3, apiKey: none; see 'mcpbridge help agent')",
			r.endpoint(), c.APIKeyEnv, c.APIKeyEnv, where)
	}
	return usagef("agent: the model's endpoint %s would be sent the key in %s (no model entry names its own), which is not set: add a model entry to %s with baseURL: %s and apiKeyEnv: the variable that holds its key, or apiKey: none if it takes no key",
		r.endpoint(), c.APIKeyEnv, where, r.endpoint())
}

// warnInClear warns, on stderr or as a --json notice, when the key is
// sent unencrypted to another machine (http://): anyone on the path can
// read it and the conversation.
func (r *agentRun) warnInClear() {
	if r.cfg.APIKeyEnv == "" || !chatapi.InClear(r.cfg.BaseURL) {
		return
	}
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf(
		"warning: the model's endpoint %s is http:// to another machine: the API key (%s) and the conversation travel in clear; use https://",
		r.endpoint(), r.cfg.APIKeyEnv)})
}

// warnKeyElsewhere warns, on stderr or as a --json notice, when DeepSeek's
// key (DEEPSEEK_API_KEY, read since no entry named another) goes to
// another machine than DeepSeek's API: the endpoint was named, the key
// it takes was not.
func (r *agentRun) warnKeyElsewhere() {
	c := r.cfg
	if c.APIKeyEnv != sampling.DefaultAPIKeyEnv || c.APIKeyEnvNamed || chatapi.IsDeepSeek(c.BaseURL) || !chatapi.OffMachine(c.BaseURL) {
		return
	}
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf(
		"warning: DeepSeek's key (%s) is sent to %s, which is not DeepSeek's API: name the key that endpoint takes in a model entry (apiKeyEnv), or apiKey: none",
		c.APIKeyEnv, r.endpoint())})
}

// endpoint is the model's base URL as written, as shown: without a key
// the user put in it (chatapi.Endpoint).
func (r *agentRun) endpoint() string { return chatapi.Endpoint(r.cfg.BaseURLWritten) }

// trustedServers are the servers of entries marked trusted: true, but a
// project's: a repository may not approve its own tools, its read-only
// ones no more than any other (as its permissions' allow list is not
// used), and a notice says so.
func (r *agentRun) trustedServers(src *source) map[string]bool {
	project := map[string]bool{}
	for _, cf := range src.files {
		project[cf.Path] = cf.Scope == scopes.Project
	}
	out := map[string]bool{}
	for _, pe := range src.plan.Enabled() {
		c, ok := pe.Spec.Config.(mcpclient.Config)
		switch {
		case !ok || !c.Trusted:
		case project[pe.Entry.File]:
			r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf(
				"%s: trusted: true of a project's entry (%s) is not used: a repository may not approve its own tools; mark the server trusted in %s",
				pe.Entry.File, c.ServerName, r.e.userConfigPath())})
		default:
			out[c.ServerName] = true
		}
	}
	return out
}

// openSession creates the run's session, or opens the one --resume or
// --continue names.
func (r *agentRun) openSession() (*agent.Session, error) {
	dir, err := agentsession.Dir(r.e.lookup)
	if err != nil {
		return nil, err
	}
	s, err := agentsession.Open(dir, r.af.resume, r.af.cont, time.Now())
	if _, mistaken := errors.AsType[*agentsession.ChoiceError](err); mistaken {
		return nil, usagef("%v", err)
	}
	return s, err
}

// agentNewSession starts a new session in the run's directory (/clear).
func agentNewSession(r *agentRun) (*agent.Session, error) {
	dir, err := agentsession.Dir(r.e.lookup)
	if err != nil {
		return nil, err
	}
	return agentsession.Open(dir, "", false, time.Now())
}

func (r *agentRun) close() {
	if r.b != nil {
		r.b.close()
	}
	r.session.Close()
}

// result reports the end of a headless run and its exit status: in
// text, the failure or the --max-steps stop, then how to go on.
func (r *agentRun) result(res *agent.Result, err error) error {
	ev := agent.Event{Type: agent.EventResult, Text: res.Text, Usage: &res.Usage, Total: &res.Total, Steps: res.Steps, Session: r.session.ID}
	if err != nil {
		ev.Error = err.Error()
	}
	r.out.Event(ev)
	code := ExitOK
	switch {
	case errors.Is(err, agent.ErrMaxSteps):
		code = ExitMaxSteps
		if !r.f.json {
			fmt.Fprintf(r.e.Stderr, "mcpbridge: agent: stopped after %d steps (--max-steps)\n", res.Steps)
		}
	case err != nil && r.f.json:
		code = ExitFailed
	case err != nil:
		code = r.e.exit(fmt.Errorf("agent: %w", err)) // said before how to go on
	}
	r.sayHowToGoOn(err)
	if code != ExitOK {
		return &exitError{code}
	}
	return nil
}

// sayHowToGoOn says on stderr, once a run in text ends (ended: how its
// last turn did), which session it saved and the command that goes on
// with it: with -p the id is shown nowhere else, and --continue takes
// whichever session was used last. A session past the model's context
// window cannot go on: every turn would fail alike. --json's session and
// result lines carry the id.
func (r *agentRun) sayHowToGoOn(ended error) {
	if r.f.json || !r.session.Saved() {
		return
	}
	id := r.session.ID
	if chatapi.ContextTooLong(ended) {
		fmt.Fprintf(r.e.Stderr, "mcpbridge: session %s is longer than the model's context window, so it cannot go on: "+
			"start a new session (mcpbridge agent without --resume or --continue), and %s\n", id, askLess)
		return
	}
	fmt.Fprintf(r.e.Stderr, "mcpbridge: session %s saved; continue it with: mcpbridge agent --resume %s\n", id, id)
}

// askLess ends the advice on a conversation past the model's context
// window: a new one does not help when a single prompt's work fills it.
const askLess = "ask for less at once if one prompt's work filled it"

// headless runs one prompt and prints the answer (or JSON lines).
func (r *agentRun) headless(ctx context.Context, prompt string) error {
	r.noteNamed(prompt)
	res, err := r.ag.Run(ctx, prompt)
	if err == nil && !r.f.json {
		fmt.Fprintln(r.e.Stdout, termsafe.Text(strings.TrimRight(res.Text, "\n")))
	}
	return r.result(res, err)
}
