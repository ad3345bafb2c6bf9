package console

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// Manage actions a viewer with the manage grant takes on one entry.
const (
	// ActionRestart starts the entry again with the config it runs.
	ActionRestart = "restart"
	// ActionReload re-reads the config files and applies the entry's
	// config from them alone.
	ActionReload = "reload"
)

// serverData is a server's page: its row, and whether the viewer may
// restart and reload it.
type serverData struct {
	serverRow
	CanManage bool
	Done      string // what the last action did, shown once
}

// auditAction records a console action in the audit trail, under the
// viewer's identity, as the gateway records a call.
func (c *Console) auditAction(si *signin, action, entry, outcome, reason string) {
	if a, ok := c.opts.Access.(interface{ AuditConsole(audit.Entry) }); ok {
		a.AuditConsole(audit.Entry{Identity: si.viewer.Name, Method: "console/" + action, Name: entry, Outcome: outcome, Reason: reason})
	}
}

// manage restarts or reloads one entry for a viewer granted it; the
// action and its refusals are audited and logged.
func (c *Console) manage(w http.ResponseWriter, r *http.Request, si *signin) {
	name, action := r.PathValue("name"), r.PathValue("action")
	if action != ActionRestart && action != ActionReload {
		http.Error(w, fmt.Sprintf("Not Found: %q is no action (restart or reload)", action), http.StatusNotFound)
		return
	}
	sees := c.screenOf(r.Context(), si)
	rows := c.servers(sees)
	i := slices.IndexFunc(rows, func(s serverRow) bool { return s.Label() == name })
	if i < 0 {
		http.Error(w, fmt.Sprintf("Not Found: no server is named %q", name), http.StatusNotFound)
		return
	}
	d := serverData{serverRow: rows[i], CanManage: si.viewer.Manage && c.opts.Manage != nil}
	if !d.CanManage {
		p := framed(si, "servers", "Server "+name, &d)
		c.log.Warn("console "+action+" refused: not granted", "identity", si.viewer.Name, "entry", d.ID)
		c.auditAction(si, action, d.ID, "denied", "not granted console.manage")
		p.Error = fmt.Sprintf("Restarting and reloading entries is not granted to %s: add it to the gateway entry's console.manage.", si.viewer.Name)
		c.render(w, r, http.StatusForbidden, "server", p)
		return
	}
	if c.refuseUnaudited(w, r, si, &d, action) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	err := c.opts.Manage(ctx, d.ID, action)
	// The answer is a redirect to the server's page, which shows the
	// outcome: reloading it does not do the action again.
	o := outcome{path: gateway.ConsolePath + "/servers/" + name}
	if err != nil {
		c.log.Warn("console "+action+" failed", "identity", si.viewer.Name, "entry", d.ID, "error", err)
		c.auditAction(si, action, d.ID, "error", err.Error())
		o.err = fmt.Sprintf("The %s of %s failed: %v", action, name, err)
		c.redirect(w, r, si, o)
		return
	}
	c.log.Info("console "+action, "identity", si.viewer.Name, "entry", d.ID)
	c.auditAction(si, action, d.ID, "ok", "")
	o.done = fmt.Sprintf("%s: %sed, now %s.", name, action, c.rowOf(d.ID, d.serverRow, sees).State)
	c.redirect(w, r, si, o)
}

// refuseUnaudited refuses action on d's entry, and reports so, while the
// audit trail cannot take its line and fails closed: done, the action
// could not be undone when its line then failed, and it would be the one
// thing the gateway does unrecorded while it refuses every call.
func (c *Console) refuseUnaudited(w http.ResponseWriter, r *http.Request, si *signin, d *serverData, action string) bool {
	a, ok := c.opts.Access.(interface{ Unaudited() string })
	if !ok {
		return false
	}
	why := a.Unaudited()
	if why == "" {
		return false
	}
	c.log.Warn("console "+action+" refused: its audit line cannot be written", "identity", si.viewer.Name, "entry", d.ID, "error", why)
	p := framed(si, "servers", "Server "+d.Label(), d)
	p.Error = fmt.Sprintf("The %s of %s was not done: %s. Once the trail can take a line (/healthz says when), send it again.", action, d.Label(), why)
	c.render(w, r, http.StatusServiceUnavailable, "server", p)
	return true
}

// rowOf is entry id's row now as sees screens it, or old when it is gone.
func (c *Console) rowOf(id string, old serverRow, sees func(gateway.Offer, string) bool) serverRow {
	for _, s := range c.servers(sees) {
		if s.ID == id {
			return s
		}
	}
	return old
}
