package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// page is what every template gets: the frame's fields and the page's own
// Data.
type page struct {
	Title  string
	Nav    string // the navigation entry to mark current
	Viewer *gatewayauth.Viewer
	CSRF   string
	Error  string
	Data   any
}

// pageNames are the templates, each rendered inside layout.html.
var pageNames = []string{"login", "servers", "server", "tools", "tool", "traffic", "audit"}

var funcs = template.FuncMap{
	"ms": func(d time.Duration) string {
		if d == 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
	},
	"stamp":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"short":   short,
	"visible": visible,
	// count is n and noun, plural but for one: "1 finding", "2 findings".
	"count": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return strconv.Itoa(n) + " " + noun + "s"
	},
}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/rows.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parsing the %s page: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page; a template that fails is a bug, logged and
// answered 500 without a half page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, p); err != nil {
		c.log.Error("console: rendering a page", "page", name, "error", err)
		http.Error(w, "Internal Server Error: the page could not be rendered (see serve's log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// framed is a page with the frame's fields filled for si.
func framed(si *signin, nav, title string, data any) page {
	v := si.viewer
	return page{Title: title, Nav: nav, Viewer: &v, CSRF: si.acts.issue(), Data: data}
}

// serverRow is one entry on the servers page: its status, without its
// config (which may hold secrets).
type serverRow struct {
	host.Status
	Prompts int
	// Probe marks a row of the health's beyond the host's entries: it
	// has no page and no action.
	Probe bool
}

// Held counts the definitions withheld by the pin or the scan.
func (s serverRow) Held() int {
	n := 0
	for _, note := range s.PinNotes {
		if strings.HasPrefix(note, "withheld") {
			n++
		}
	}
	if s.Scan != nil {
		n += len(s.Scan.Held)
	}
	return n
}

// Findings counts the scan's findings.
func (s serverRow) Findings() int {
	if s.Scan == nil {
		return 0
	}
	return len(s.Scan.Findings)
}

// Label is the entry's name, or its id when it has none.
func (s serverRow) Label() string { return cmpOr(s.Name, s.ID) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// servers is the host's entries as the servers page lists them (the
// gateway entry and other kinds that are no server included: their state
// matters as much), to a viewer who sees what sees lets through: their
// counts, pin notes and scan findings leave out the tools and prompts the
// policy hides from them.
func (c *Console) servers(sees func(gateway.Offer, string) bool) []serverRow {
	reg := c.opts.Registry
	hidden := map[string]int{} // each server's tools hidden from the viewer
	for _, t := range reg.List() {
		if !sees(gateway.OfferTool, t.Name) {
			hidden[t.Origin.Server]++
		}
	}
	prompts, shown := map[string]bool{}, map[string]int{}
	for _, p := range reg.Prompts() {
		prompts[p.Name] = true
		if sees(gateway.OfferPrompt, p.Name) {
			shown[p.Origin.Server]++
		}
	}
	v := serverView{sees: sees, known: func(kind gateway.Offer, name string) bool {
		if kind == gateway.OfferPrompt {
			return prompts[name]
		}
		_, ok := reg.Get(name)
		_, held := reg.Withheld(name)
		return ok || held
	}}
	var out []serverRow
	for _, st := range c.opts.Status() {
		row := serverRow{Status: v.screen(st), Prompts: shown[st.Name]}
		if st.Name != "" {
			row.Tools = max(0, row.Tools-hidden[st.Name])
		}
		out = append(out, row)
	}
	return append(out, c.probeRows(out)...)
}

// probeRows are the rows of what the gateway's health reports beyond
// rows, the host's entries: the store, a refused config file, a gateway
// entry not in force, and why calls are refused, if they are. Without
// them the page showed every entry ready while /healthz answered 503.
func (c *Console) probeRows(rows []serverRow) []serverRow {
	if c.opts.Health == nil {
		return nil
	}
	h := c.opts.Health()
	var out []serverRow
	for _, b := range h.Backends {
		if !slices.ContainsFunc(rows, func(r serverRow) bool { return r.Label() == b.Name }) {
			out = append(out, serverRow{Status: host.Status{Name: b.Name, State: host.State(b.State), Err: b.Error}, Probe: true})
		}
	}
	if h.Refusing != "" {
		out = append(out, serverRow{Status: host.Status{Name: "calls", State: "refused", Err: h.Refusing}, Probe: true})
	}
	return out
}

func (c *Console) serversPage(w http.ResponseWriter, r *http.Request, si *signin) {
	c.render(w, r, http.StatusOK, "servers", framed(si, "servers", "Servers", c.servers(c.screenOf(r.Context(), si))))
}

func (c *Console) serverPage(w http.ResponseWriter, r *http.Request, si *signin) {
	name := r.PathValue("name")
	rows := c.servers(c.screenOf(r.Context(), si))
	i := slices.IndexFunc(rows, func(s serverRow) bool { return !s.Probe && s.Label() == name })
	if i < 0 {
		c.render(w, r, http.StatusNotFound, "server", page{Title: "No such server", Nav: "servers", Viewer: &si.viewer, CSRF: si.acts.issue(),
			Error: fmt.Sprintf("No server is named %q: the servers page lists them.", name)})
		return
	}
	row := rows[i]
	d := serverData{serverRow: row, CanManage: si.viewer.Manage && c.opts.Manage != nil}
	p := framed(si, "servers", "Server "+row.Label(), &d)
	if o, ok := outcomeOf(r, si); ok {
		d.Done, p.Error = o.done, o.err
	}
	c.render(w, r, http.StatusOK, "server", p)
}
