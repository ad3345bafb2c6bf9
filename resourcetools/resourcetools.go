// Package resourcetools offers a model the resources of a registry's
// servers through two bridge-level tools, list_mcp_resources and
// read_mcp_resource, registered while some server (not opted out with
// resourceTools: false) offers resources. Their names never start with
// mcp__, so they never collide with a server's tools.
package resourcetools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The tools' names.
const (
	ListName = "list_mcp_resources"
	ReadName = "read_mcp_resource"
)

// pageSize bounds one list_mcp_resources answer; the rest is behind its
// nextCursor.
const pageSize = 100

// Follower keeps the two tools registered in a registry exactly while
// some server offers resources to the model.
type Follower struct {
	reg  *tool.Registry
	src  *tool.Source
	stop func()

	mu    sync.Mutex
	shown bool // guarded by mu
}

// Follow registers the two tools in reg whenever a server offers resources
// to the model, and removes them when none does, following reg's changes
// until Stop.
func Follow(reg *tool.Registry) *Follower {
	f := &Follower{reg: reg, src: reg.NewSource()}
	changed, cancel := reg.Watch()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			f.Refresh()
			select {
			case <-changed:
			case <-done:
				return
			}
		}
	})
	f.stop = sync.OnceFunc(func() {
		close(done)
		wg.Wait()
		cancel()
		f.src.Close()
	})
	return f
}

// Refresh brings the tools up to date at once, for a caller that lists
// tools right after a change (the watch would do it a moment later).
func (f *Follower) Refresh() {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := offered(f.reg)
	if want == f.shown {
		return
	}
	f.shown = want
	if want {
		// Fails when closed, or when a Go tool took one of the names:
		// then the model has that tool, and the next change retries.
		f.shown = f.src.Publish(Tools(f.reg)...) == nil
	} else {
		f.src.Clear()
	}
}

// Stop removes the tools and stops following; idempotent.
func (f *Follower) Stop() { f.stop() }

// offered reports whether some server shows resources to the model.
func offered(reg *tool.Registry) bool {
	return slices.ContainsFunc(reg.Servers(), func(o tool.ServerOffer) bool { return o.Resources && !o.HideResources })
}

// visible reports whether server's resources are shown to the model.
func visible(reg *tool.Registry, server string) bool {
	return slices.ContainsFunc(reg.Servers(), func(o tool.ServerOffer) bool {
		return o.Server == server && o.Resources && !o.HideResources
	})
}

// Tools returns the two tools over reg's resources.
func Tools(reg *tool.Registry) []tool.Tool {
	return []tool.Tool{
		{
			Name: ListName,
			Description: "List the resources (files, documents, records) and resource templates that the connected MCP servers offer. " +
				"Each has a server and a uri; read one with " + ReadName + ".",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"server":{"type":"string","description":"Only this server's resources (optional)."},` +
				`"cursor":{"type":"string","description":"The nextCursor of a previous answer, for the next page (optional)."}},` +
				`"additionalProperties":false}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Execute:     func(ctx context.Context, args json.RawMessage) (tool.Output, error) { return list(reg, args) },
		},
		{
			Name:        ReadName,
			Description: "Read one resource of an MCP server by its uri (from " + ListName + ", or a uri matching one of its templates).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"server":{"type":"string","description":"The server offering the resource."},` +
				`"uri":{"type":"string","description":"The resource's URI."}},` +
				`"required":["server","uri"],"additionalProperties":false}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Execute:     func(ctx context.Context, args json.RawMessage) (tool.Output, error) { return read(ctx, reg, args) },
		},
	}
}

// listing is what list_mcp_resources answers.
type listing struct {
	Resources  []entry `json:"resources"`
	Templates  []entry `json:"resourceTemplates,omitempty"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// entry is one resource or template as the model sees it.
type entry struct {
	Server      string `json:"server"`
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

func list(reg *tool.Registry, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Server string `json:"server"`
		Cursor string `json:"cursor"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	shown := shownServers(reg, in.Server)
	if in.Server != "" && !shown[in.Server] {
		return tool.Output{}, fmt.Errorf("no server %q offers resources", in.Server)
	}
	start := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(in.Cursor)
		if err != nil || n < 0 {
			return tool.Output{}, fmt.Errorf("invalid cursor %q: pass the nextCursor of a previous answer", in.Cursor)
		}
		start = n
	}
	var all []entry
	for _, r := range reg.Resources() {
		if shown[r.Server] {
			all = append(all, entry{Server: r.Server, URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType})
		}
	}
	out := listing{Resources: []entry{}}
	if start < len(all) {
		end := min(start+pageSize, len(all))
		out.Resources = all[start:end]
		if end < len(all) {
			out.NextCursor = strconv.Itoa(end)
		}
	}
	if start == 0 { // templates are few: all on the first page
		for _, t := range reg.ResourceTemplates() {
			if shown[t.Server] {
				out.Templates = append(out.Templates, entry{Server: t.Server, URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType})
			}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return tool.Output{}, err
	}
	return tool.Output{Content: []tool.Content{tool.Text(string(b))}, Value: b}, nil
}

// shownServers returns the servers whose resources a listing for want
// ("" for all) shows the model.
func shownServers(reg *tool.Registry, want string) map[string]bool {
	out := map[string]bool{}
	for _, o := range reg.Servers() {
		if o.Resources && !o.HideResources && (want == "" || want == o.Server) {
			out[o.Server] = true
		}
	}
	return out
}

func read(ctx context.Context, reg *tool.Registry, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if in.Server == "" || in.URI == "" {
		return tool.Output{}, fmt.Errorf("invalid arguments: server and uri are required")
	}
	if !visible(reg, in.Server) {
		return tool.Output{}, fmt.Errorf("no server %q offers resources", in.Server)
	}
	res, err := reg.ReadResource(ctx, in.Server, in.URI)
	if err != nil {
		return tool.Output{}, err
	}
	return tool.Output{Content: res.Content, Value: res.Wire}, nil
}
