package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// loadPermissions reads the run's standing permissions: the user config's
// permissions entries, whatever --config says (they are the person's, as
// Claude Code's settings are), and those of the source's other files. A
// project file found from the working directory may deny but not allow:
// a cloned repository must not approve its own tools. An invalid
// permissions entry stops the agent, as an invalid guard does.
func (r *agentRun) loadPermissions(src *source) error {
	user := r.e.userConfigPath()
	if user != "" {
		plan, err := r.userPlan(user)
		if err != nil {
			return err
		}
		if err := r.addPermissions(plan, func(string) bool { return true }); err != nil {
			return err
		}
	}
	project := map[string]bool{}
	for _, cf := range src.files {
		project[cf.Path] = cf.Scope == scopes.Project
	}
	others := &host.Plan{Entries: slices.DeleteFunc(slices.Clone(src.plan.Entries), func(pe host.PlanEntry) bool { return pe.Entry.File == user })}
	return r.addPermissions(others, func(file string) bool {
		if project[file] {
			r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf(
				"%s: the allow list of a project's permissions entry is not used (a repository may not approve its own tools); its deny list is: put allow patterns in %s", file, user)})
			return false
		}
		return true
	})
}

// userPlan is the user config at path, read once a run (readUserPlan):
// its model and its permissions are the agent's whatever --config says.
func (r *agentRun) userPlan(path string) (*host.Plan, error) {
	if r.user == nil {
		plan, err := r.e.readUserPlan(path)
		if err != nil {
			return nil, err
		}
		r.user = plan
	}
	return r.user, nil
}

// readUserPlan parses the user config alone; none is an empty plan. One
// that is there but cannot be looked at (a link to a file that is gone, a
// folder that cannot be searched) stops the agent: it would run without
// the user's deny rules.
func (e *env) readUserPlan(path string) (*host.Plan, error) {
	if _, err := os.Stat(path); err != nil {
		if _, lerr := os.Lstat(path); errors.Is(lerr, fs.ErrNotExist) || errors.Is(lerr, syscall.ENOTDIR) {
			return &host.Plan{}, nil // not there, or under a file: none
		}
		return nil, &configError{fmt.Errorf("the user config %s cannot be looked at: %w\nagent: not started: the agent reads its permissions (deny rules too), whatever --config says", path, err)}
	}
	data, err := host.ReadConfigFile(path)
	if err == nil {
		var plan *host.Plan
		if plan, err = e.configReader(e.catalog(true)).Parse(path, data); err == nil {
			return plan, nil
		}
	}
	return nil, &configError{fmt.Errorf("%w\nagent: not started: the agent reads the permissions of the user config %s, whatever --config says", err, path)}
}

// addPermissions adds plan's permissions entries to the run's rules; one
// that cannot be read stops the agent, as an invalid guard does.
func (r *agentRun) addPermissions(plan *host.Plan, mayAllow func(file string) bool) error {
	if err := r.rules.AddPlan(plan, mayAllow); err != nil {
		return &configError{fmt.Errorf("%w\nagent: not started: its permissions cannot be read", err)}
	}
	return nil
}

// refused tells the person that a deny pattern refused c.
func (r *agentRun) refused(c agent.Call, pattern string) {
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("tool %s was refused without asking: denied by %q in %s (permissions.deny)",
		c.Name, pattern, r.rules.From[pattern])})
}

// keep writes an "always" answer's pattern to the user config's
// permissions entry, so that later runs do not ask; it says where, or why
// it could not.
func (r *agentRun) keep(_ agent.Call, pattern string) {
	path := r.e.userConfigPath()
	if path == "" {
		r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("%s is allowed until the agent exits: with neither XDG_CONFIG_HOME nor HOME set there is no user config to keep it in", pattern)})
		return
	}
	err := r.e.editConfig(path, permkind.ID, func(data []byte, doc, list *yaml.Node) ([]byte, error) {
		return permkind.Allow(data, doc, list, pattern)
	})
	if err != nil {
		r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("%s is allowed until the agent exits; it could not be kept in %s: %v", pattern, path, err)})
		return
	}
	r.rules.Add(path, []string{pattern}, nil)
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("%s is allowed from now on: kept in %s (permissions.allow)", termsafe.Line(pattern), path)})
}
