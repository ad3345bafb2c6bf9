package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/cliententry"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// loginTimeout bounds a login: a person has this long to approve.
const loginTimeout = 10 * time.Minute

// oauthOptions are the OAuth settings of a command: tokens in the state
// directory, and no browser ever (a server that needs one shows as
// needs-login), unless --oauth-headless.
func (e *env) oauthOptions(f *flags) mcpclient.OAuthOptions {
	var o mcpclient.OAuthOptions
	if dir, err := oauth.StateDir(e.lookup); err == nil {
		o.StateDir = dir
	}
	if f != nil && f.oauthHeadless {
		o.Mode = oauth.ModeHeadless
	}
	return o
}

// loginRun starts the status text of a needs-login server (mcpclient's).
const loginRun = "run mcpbridge login "

// loginHints completes the command a needs-login server names with the
// SOURCE the command was given, so that it can be run as shown: login
// takes a --url in place of the server's name.
func loginHints(statuses []host.Status, f *flags) []host.Status {
	for i, st := range statuses {
		if st.State != host.StateNeedsLogin || !strings.HasPrefix(st.Err, loginRun) {
			continue
		}
		if f.url != "" {
			statuses[i].Err = strings.TrimSpace(loginRun) + sourceArgs(f)
		} else {
			statuses[i].Err += sourceArgs(f)
		}
	}
	return statuses
}

// sourceArgs is the SOURCE f names as arguments, each with its leading
// space, for a command a message tells the user to run: with them it reads
// what this command read. "" for the default files. The value of a
// --header whose name says it holds a secret (cliententry.SecretHeader)
// is shown as [redacted]: the message may reach a log or a model.
func sourceArgs(f *flags) string {
	switch {
	case f.url != "":
		args := " --url " + shellQuote(f.url)
		if f.name != "" {
			args += " --name " + shellQuote(f.name)
		}
		return args + headerArgs(f.headers)
	case f.config != "":
		return " --config " + shellQuote(f.config)
	}
	return ""
}

// headerArgs are the --header flags of headers, each with its leading
// space, their secrets' values redacted (redactedHeader).
func headerArgs(headers []string) string {
	var args string
	for _, h := range headers {
		args += " --header " + shellQuote(redactedHeader(h))
	}
	return args
}

// redactedHeader is the --header h with its value shown as [redacted]
// when its name says it holds a secret.
func redactedHeader(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok && cliententry.SecretHeader(strings.TrimSpace(name)) {
		return strings.TrimSpace(name) + ": [redacted]"
	}
	return h
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// loginTarget resolves the server of login and logout: NAME in SOURCE
// (serverName or entry id), or the --url server.
func (e *env) loginTarget(cmd string, argv []string) (*flags, *source, mcpclient.Config, error) {
	f, err := parseFlags(cmd, specOf(cmd), argv)
	if err != nil {
		return nil, nil, mcpclient.Config{}, err
	}
	var name string
	switch {
	case f.url != "" && len(f.args) == 0:
		name = f.name
		if name == "" {
			name = "remote"
		}
	case f.url == "" && len(f.args) == 1:
		name = f.args[0]
	default:
		return nil, nil, mcpclient.Config{}, usagef("%s: want NAME, or --url URL", cmd)
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return nil, nil, mcpclient.Config{}, err
	}
	for _, pe := range src.plan.Enabled() {
		if pe.Err != nil && (pe.Entry.ID == name || host.DisplayName(pe.Entry) == name) {
			// Its URL and oauth block, which name its tokens, are not known.
			return nil, nil, mcpclient.Config{}, &configError{fmt.Errorf("%s: server %q cannot be used until its entry is fixed: %w", cmd, name, pe.Err)}
		}
		cfg, ok := pe.Spec.Config.(mcpclient.Config)
		if !ok || (pe.Spec.Name != name && pe.Entry.ID != name) {
			continue
		}
		if cfg.Transport != mcpclient.TransportStreamableHTTP {
			return nil, nil, cfg, usagef("%s: server %q is not a streamable-http server: only those use OAuth", cmd, name)
		}
		return f, src.only(pe.Spec.Name), cfg, nil
	}
	if m := yamlconf.Suggest(name, otherServers(src.plan, name)); m != "" {
		return nil, nil, mcpclient.Config{}, usagef("%s: no enabled server named %q in %s: did you mean %q?", cmd, name, src.name, m)
	}
	return nil, nil, mcpclient.Config{}, usagef("%s: no enabled server named %q in %s", cmd, name, src.name)
}

// otherServers are the ids and serverNames of plan's enabled servers but
// name: what a name that is no server's may have meant.
func otherServers(plan *host.Plan, name string) []string {
	var names []string
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == clientkind.Name {
			names = append(names, pe.Entry.ID, host.DisplayName(pe.Entry), pe.Spec.Name)
		}
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == name || n == "" })
}

// login forgets the server's stored tokens, then connects with a login
// (a browser, or --oauth-headless) and stores the new ones.
func (e *env) login(ctx context.Context, argv []string) error {
	f, src, cfg, err := e.loginTarget("login", argv)
	if err != nil {
		return err
	}
	o := e.oauthOptions(f)
	if o.StateDir == "" {
		return fmt.Errorf("login: neither XDG_STATE_HOME nor HOME is set: no place for the tokens")
	}
	if _, err := oauth.Forget(ctx, o.StateDir, cfg.URL, cfg.OAuth); err != nil {
		return err
	}
	if !f.oauthHeadless {
		port := 0
		if cfg.OAuth != nil {
			port = cfg.OAuth.CallbackPort
		}
		var browsers oauth.Browsers
		defer browsers.Wait()
		cb, err := oauth.ListenCallback(port, cfg.ServerName, e.Stderr, func(url string) error { return browsers.Open(e.getenv, e.Environ, url) })
		if err != nil {
			return err
		}
		defer cb.Close()
		o.Mode, o.Callback = oauth.ModeLogin, cb
	}
	// A person needs longer than a server's startup timeout.
	cfg.StartupTimeout = loginTimeout
	spec, err := clientkind.NewSpec(cfg)
	if err != nil {
		return err // untested: the config was validated when loaded
	}
	// The plan keeps the entries that are not servers, in any order.
	i := slices.IndexFunc(src.plan.Entries, func(pe host.PlanEntry) bool {
		return pe.Entry.Name == clientkind.Name && pe.Spec.Name == cfg.ServerName
	})
	src.plan.Entries[i].Spec = spec
	id := src.plan.Entries[i].Entry.ID
	b, err := e.openOAuth(ctx, src, f, o)
	if err != nil {
		return err
	}
	defer b.close()
	st := b.statuses[slices.IndexFunc(b.statuses, func(st host.Status) bool { return st.ID == id })]
	if st.State != host.StateReady {
		fmt.Fprintf(e.Stderr, "mcpbridge: login to %q failed: %s\n", cfg.ServerName, termsafe.Lines(st.Err))
		return &exitError{ExitFailed}
	}
	if cfg.OAuth.StoresTokens() && !oauth.Stored(o.StateDir, cfg.URL, cfg.OAuth) {
		fmt.Fprintf(e.Stdout, "%s did not ask for a login (%d tools).\n", cfg.ServerName, st.Tools)
		return nil
	}
	fmt.Fprintf(e.Stdout, "Logged in to %s (%d tools).\n", cfg.ServerName, st.Tools)
	return nil
}

// logout forgets the server's stored tokens.
func (e *env) logout(ctx context.Context, argv []string) error {
	f, _, cfg, err := e.loginTarget("logout", argv)
	if err != nil {
		return err
	}
	dir := e.oauthOptions(f).StateDir
	had := false
	if dir != "" {
		if had, err = oauth.Forget(ctx, dir, cfg.URL, cfg.OAuth); err != nil {
			return err
		}
	}
	if had {
		fmt.Fprintf(e.Stdout, "Logged out of %s.\n", cfg.ServerName)
	} else {
		fmt.Fprintf(e.Stdout, "No stored login for %s.\n", cfg.ServerName)
	}
	return nil
}
