package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// maxMatches bounds a search's results on the tools page.
const maxMatches = 50

type toolRow struct {
	Name, Server, Title, Description string
}

type toolsData struct {
	Query string
	Tools []toolRow
	Total int
}

// toolsPage lists the tools, or those a ?q= search finds with the
// gateway's own tool search, best first.
func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request, si *signin) {
	all := c.viewOf(r, si)
	d := toolsData{Query: strings.TrimSpace(r.URL.Query().Get("q")), Total: len(all)}
	byName := map[string]tool.Tool{}
	for _, t := range all {
		byName[t.Name] = t
	}
	if d.Query == "" {
		for _, t := range all {
			d.Tools = append(d.Tools, rowOf(t))
		}
	} else {
		for _, m := range toolsearch.New(all).Search(d.Query, maxMatches) {
			d.Tools = append(d.Tools, rowOf(byName[m.Name]))
		}
	}
	c.render(w, r, http.StatusOK, "tools", framed(si, "tools", "Tools", d))
}

// viewOf is the registry's tools si may see (visible), in its order.
func (c *Console) viewOf(r *http.Request, si *signin) []tool.Tool {
	sees := c.visible(r.Context(), si)
	var out []tool.Tool
	for _, t := range c.opts.Registry.List() {
		if sees(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// toolOf is the tool named in r's path when si may see it: a tool hidden
// from si is as unknown as one that does not exist.
func (c *Console) toolOf(r *http.Request, si *signin) (tool.Tool, bool) {
	t, ok := c.opts.Registry.Get(r.PathValue("name"))
	if !ok || !c.visible(r.Context(), si)(t.Name) {
		return tool.Tool{}, false
	}
	return t, true
}

// unknownTool is the tool page of a name si finds no tool by.
func (c *Console) unknownTool(w http.ResponseWriter, r *http.Request, si *signin, refused string) {
	msg := fmt.Sprintf("No tool is named %q: the tools page lists them.", r.PathValue("name"))
	if refused != "" {
		msg = "Refused: " + refused
	}
	c.render(w, r, http.StatusNotFound, "tool", page{Title: "No such tool", Nav: "tools", Viewer: &si.viewer, CSRF: si.acts.issue(), Error: msg})
}

func rowOf(t tool.Tool) toolRow {
	return toolRow{Name: t.Name, Server: t.Origin.Server, Title: t.Title, Description: t.Description}
}

// field is one input of a tool's try-it form, from a top-level property
// of its input schema.
type field struct {
	Name, Type, Description string
	Enum                    []string
	Required                bool
	Value                   string
}

// Input is the HTML input type the field takes.
func (f field) Input() string {
	switch f.Type {
	case "number", "integer":
		return "number"
	case "boolean":
		return "checkbox"
	case "string":
		return "text"
	}
	return "json"
}

type toolData struct {
	toolRow
	Schema, Output, Annotations string
	Tokens                      int
	Icons                       []template.URL // data: raster icons, shown
	IconLinks                   []string       // https: icons, named, never fetched
	Fields                      []field
	CanTry                      bool
	Result                      *callResult
}

type schemaProp struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
}

// fieldsOf turns an input schema's top-level properties into form fields,
// required ones first, each group by name. A property of another type
// (object, array, several types) is a JSON text field.
func fieldsOf(schema json.RawMessage) []field {
	var s struct {
		Properties map[string]schemaProp `json:"properties"`
		Required   []string              `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := make([]field, 0, len(s.Properties))
	for name, p := range s.Properties {
		f := field{Name: name, Description: p.Description, Required: contains(s.Required, name)}
		f.Type, _ = p.Type.(string)
		for _, e := range p.Enum {
			f.Enum = append(f.Enum, fmt.Sprint(e))
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func indent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

func (c *Console) toolData(t tool.Tool, si *signin) toolData {
	n, _ := tokens.Tool(t)
	d := toolData{toolRow: rowOf(t), Schema: indent(t.InputSchema), Output: indent(t.OutputSchema),
		Annotations: indent(t.Annotations), Tokens: n, Fields: fieldsOf(t.InputSchema),
		CanTry: si.viewer.Try && c.opts.MCPURL != nil}
	d.Icons, d.IconLinks = iconsOf(t.Icons)
	return d
}

// iconsOf splits a tool's icons into the data: raster images the page
// shows and the https: ones it only names: loading those would tell a
// server's host who looks at the console, and when (a tracking pixel).
// A data: image of another type (SVG among them) is left out.
func iconsOf(icons []tool.Icon) (shown []template.URL, named []string) {
	for _, ic := range icons {
		if rest, ok := strings.CutPrefix(ic.Src, "data:"); ok {
			mime, _, _ := strings.Cut(rest, ";")
			if u, ok := rasterURL(mime, ic.Src); ok && strings.Contains(rest, ";base64,") {
				shown = append(shown, u)
			}
			continue
		}
		named = append(named, ic.Src)
	}
	return shown, named
}

// toolPage shows a tool, with the outcome of the try-it that redirected
// here, if any (once).
func (c *Console) toolPage(w http.ResponseWriter, r *http.Request, si *signin) {
	o, _ := outcomeOf(r, si)
	t, ok := c.toolOf(r, si)
	if !ok {
		c.unknownTool(w, r, si, o.err)
		return
	}
	d := c.toolData(t, si)
	if o.result != nil {
		d.Result, d.Fields = o.result, o.fields
	}
	c.render(w, r, http.StatusOK, "tool", framed(si, "tools", "Tool "+t.Name, d))
}

// argsOf reads a try-it form into the call's arguments by the fields'
// types; an empty optional field is left out.
func argsOf(r *http.Request, fields []field) (json.RawMessage, []field, error) {
	args := map[string]any{}
	for i := range fields {
		f := &fields[i]
		f.Value = r.PostFormValue("arg." + f.Name)
		if f.Input() == "checkbox" {
			if f.Value != "" {
				args[f.Name] = true
			} else if f.Required {
				args[f.Name] = false
			}
			continue
		}
		if f.Value == "" {
			continue
		}
		v, err := fieldValue(*f)
		if err != nil {
			return nil, fields, fmt.Errorf("argument %q: %w", f.Name, err)
		}
		args[f.Name] = v
	}
	raw, err := json.Marshal(args)
	return raw, fields, err
}

func fieldValue(f field) (any, error) {
	switch f.Input() {
	case "number":
		n, err := strconv.ParseFloat(f.Value, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f.Value)
		}
		if f.Type == "integer" && n != float64(int64(n)) {
			return nil, fmt.Errorf("%q is not a whole number", f.Value)
		}
		return json.Number(f.Value), nil
	case "text":
		return f.Value, nil
	}
	var v any
	if err := json.Unmarshal([]byte(f.Value), &v); err != nil {
		return nil, fmt.Errorf("not valid JSON (%v): write it as JSON, such as [1, 2] or {\"k\": \"v\"}", err)
	}
	return v, nil
}

// tryTool calls a tool with the form's arguments through the gateway, as
// the viewer, and redirects to the tool's page, which shows the result.
func (c *Console) tryTool(w http.ResponseWriter, r *http.Request, si *signin) {
	t, ok := c.toolOf(r, si)
	if !ok {
		c.tryUnknown(w, r, si)
		return
	}
	d := c.toolData(t, si)
	if !d.CanTry {
		c.log.Warn("console try-it refused: not granted", "identity", si.viewer.Name, "tool", t.Name)
		p := framed(si, "tools", "Tool "+t.Name, d)
		p.Error = "Trying tools is not granted to " + si.viewer.Name + ": add it to the gateway entry's console.tryIt."
		c.render(w, r, http.StatusForbidden, "tool", p)
		return
	}
	args, fields, err := argsOf(r, d.Fields)
	d.Fields = fields
	if err != nil {
		p := framed(si, "tools", "Tool "+t.Name, d)
		p.Error = "Not called: " + err.Error()
		c.render(w, r, http.StatusBadRequest, "tool", p)
		return
	}
	// The result is shown by the tool's page this redirects to: reloading
	// it does not call the tool again.
	res := c.call(r.Context(), si, t.Name, args)
	c.redirect(w, r, si, outcome{path: r.URL.Path, result: &res, fields: fields})
}

// tryUnknown answers a try-it of a tool si cannot see, whether the policy
// hides it from si or it does not exist: it is called through the
// gateway all the same (without arguments), which answers both alike,
// as an unknown tool, and whose audit trail records the denial of a
// hidden one. The page shows that answer and nothing of the tool.
func (c *Console) tryUnknown(w http.ResponseWriter, r *http.Request, si *signin) {
	name := r.PathValue("name")
	if !si.viewer.Try || c.opts.MCPURL == nil {
		c.unknownTool(w, r, si, "")
		return
	}
	res := c.call(r.Context(), si, name, json.RawMessage(`{}`))
	c.redirect(w, r, si, outcome{path: r.URL.Path, err: cmpOr(res.Refused, fmt.Sprintf("unknown tool %q", name))})
}
