package gatewayauth

import (
	"context"
	"errors"
	"slices"

	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Console says who may use the web console (serve --console): Allow
// grants its read-only views, TryIt the calling of tools from it, Manage
// the restart and reload of one entry from it. A grant not given grants
// no one: the console fails closed.
type Console struct {
	Allow  Grant `json:"allow"`
	TryIt  Grant `json:"tryIt"`
	Manage Grant `json:"manage"`
}

// Grant names identities by subject, group or scope; a caller named by
// any of the three holds it.
type Grant struct {
	Subjects []string `json:"subjects,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
}

// holds reports whether who is named by g.
func (g Grant) holds(who *Principal) bool {
	in := func(list, have []string) bool {
		return slices.ContainsFunc(have, func(s string) bool { return slices.Contains(list, s) })
	}
	return slices.Contains(g.Subjects, who.Name) || in(g.Groups, who.Groups) || in(g.Scopes, who.Scopes)
}

var grantKeys = []string{"subjects", "groups", "scopes"}

func decodeConsole(d *yamlconf.Decoder, m *yamlconf.Map) *Console {
	m.RejectListing("allow", "tryIt", "manage")
	out := &Console{}
	for key, g := range map[string]*Grant{"allow": &out.Allow, "tryIt": &out.TryIt, "manage": &out.Manage} {
		gm, ok := d.Map(m.Value(key), m.Path(key))
		if !ok {
			continue
		}
		gm.RejectListing(grantKeys...)
		g.Subjects, _ = gm.ExpandStringList("subjects")
		g.Groups, _ = gm.ExpandStringList("groups")
		g.Scopes, _ = gm.ExpandStringList("scopes")
	}
	return out
}

// Viewer is who signed in to the console and what they may do there:
// view its pages, try tools, restart and reload entries (Manage).
type Viewer struct {
	Name              string
	View, Try, Manage bool
}

// ErrNoIdentities is ConsoleViewer's error when the gateway configures no
// identities (no static tokens, no issuer): the console then takes its own
// token instead.
var ErrNoIdentities = errors.New("the gateway configures no identities")

// ErrNotInForce is ConsoleViewer's error while the gateway entry that
// guards the run is not applied.
var ErrNotInForce = errors.New("the config's gateway entry is not in force (see serve's log): no one signs in until it is")

// ConsoleTokenSignsIn reports whether the console's own token signs in
// under cfg (nil: no gateway entry): while it names no identities, and
// serve has no --token-env token, whose identity would be one.
func (k *Keeper) ConsoleTokenSignsIn(cfg *Config) bool {
	return cfg == nil || k.opts.BearerToken == "" && !cfg.Auth.JWT() && len(cfg.Auth.Tokens) == 0
}

// ConsoleViewer checks a bearer token as the gateway would and says what
// its holder may do in the console, by the gateway entry's console grants.
// Authentication fails as Verify does; a valid token of an identity
// granted nothing is a Viewer with neither grant.
func (k *Keeper) ConsoleViewer(ctx context.Context, token string) (Viewer, error) {
	st := k.state.Load()
	if st == nil && k.required.Load() {
		// A gateway entry guards the run but is not in force (yet, or
		// any more): its identities decide, so nothing signs in, least of
		// all the console token.
		return Viewer{}, ErrNotInForce
	}
	if st == nil || k.ConsoleTokenSignsIn(&st.cfg) {
		return Viewer{}, ErrNoIdentities
	}
	who, err := st.verifier.Verify(ctx, "Bearer "+token)
	if err != nil {
		return Viewer{}, err
	}
	v := Viewer{Name: who.Name}
	if c := st.cfg.Console; c != nil {
		v.View, v.Try, v.Manage = c.Allow.holds(who), c.TryIt.holds(who), c.Manage.holds(who)
	}
	return v, nil
}

// AuditFile is the applied audit trail's path: "" when there is none, or
// it goes to stdout.
func (k *Keeper) AuditFile() string {
	if st := k.state.Load(); st != nil && st.cfg.Audit != nil && st.cfg.Audit.File != "-" {
		return st.cfg.Audit.File
	}
	return ""
}

// AuditConsole writes an action taken from the console (a restart or
// reload of an entry, or its refusal) to the applied audit trail, as the
// gateway writes a call: chained, with the time set now. Without a trail
// it does nothing.
func (k *Keeper) AuditConsole(e audit.Entry) {
	st := k.state.Load()
	if st == nil {
		return
	}
	e.Time = k.now().UTC()
	k.write(st, e)
}
