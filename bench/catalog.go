package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// catalogServer is the server name of the large catalog; touchTool is the
// tool whose call makes the server announce an (unchanged) new list.
const (
	catalogServer = "cat"
	touchTool     = "touch"
)

// catalogDef is one tool definition as the server sends it. The schema's
// keys are deliberately not in alphabetical order, so a bridge that decoded
// and re-encoded schemas would change the bytes.
type catalogDef struct {
	name, description         string
	inputSchema, outputSchema json.RawMessage
}

func (d catalogDef) raw() json.RawMessage {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"name":%q,"description":%q,"inputSchema":%s`, d.name, d.description, d.inputSchema)
	if d.outputSchema != nil {
		fmt.Fprintf(&b, `,"outputSchema":%s`, d.outputSchema)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// catalogDefs returns n definitions: touch first, then tool_00001… Every
// tenth tool declares an outputSchema.
func catalogDefs(n int) []catalogDef {
	defs := make([]catalogDef, n)
	for i := range defs {
		name := fmt.Sprintf("tool_%05d", i)
		if i == 0 {
			name = touchTool
		}
		defs[i] = catalogDef{
			name:        name,
			description: fmt.Sprintf("Searches shard %d of the archive and returns the matching records.", i),
			inputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"],"additionalProperties":false}`),
		}
		if i%10 == 5 {
			defs[i].outputSchema = json.RawMessage(`{"type":"object","properties":{"records":{"type":"array"},"total":{"type":"integer"}},"required":["records"]}`)
		}
	}
	return defs
}

// catalogScript is the raw responder's script for defs, pageSize tools per
// page; calling touch re-announces the same pages with list_changed.
func catalogScript(defs []catalogDef, pageSize int) mcppeer.RawScript {
	var pages []mcppeer.RawPage
	for i := 0; i < len(defs); i += pageSize {
		var p mcppeer.RawPage
		for _, d := range defs[i:min(i+pageSize, len(defs))] {
			p.Tools = append(p.Tools, d.raw())
		}
		pages = append(pages, p)
	}
	return mcppeer.RawScript{
		ServerName:       "catalog",
		Pages:            pages,
		Results:          map[string]json.RawMessage{touchTool: json.RawMessage(`{"content":[{"type":"text","text":"touched"}]}`)},
		ListChangeOnCall: map[string][]mcppeer.RawPage{touchTool: pages},
	}
}

// catalogResults is what row 5 measured, per round.
type catalogResults struct {
	tools, pageSize, rounds int
	bridgeTotal             []time.Duration // spawn + connect + discovery + registration
	bridgeDiscover          []time.Duration // discovery + registration (the bridge's Status.Discover)
	rawTotal                []time.Duration // spawn + connect + every tools/list page
	rawList                 []time.Duration // every tools/list page
	resync                  []time.Duration // list_changed on an unchanged list → registry updated
	compared                int             // definitions proven byte-identical, per round
}

// runCatalog measures row 5 against a raw responder listing the catalog:
// the bridge's discovery and registration and its re-sync, beside a raw
// go-sdk session listing the same pages, rounds interleaved. Every round
// proves that the registered definitions are byte for byte what the server
// sent, before and after the re-sync.
func runCatalog(ctx context.Context, o options, exe, scriptPath string, defs []catalogDef, logf func(string, ...any)) (*catalogResults, error) {
	res := &catalogResults{tools: len(defs), pageSize: o.pageSize, rounds: o.catalogRounds}
	spec := rawChild(exe, scriptPath)
	for r := range o.catalogRounds {
		logf("catalog: round %d/%d (%d tools)", r+1, o.catalogRounds, len(defs))
		for i := range 2 {
			if (i+r)%2 == 0 {
				if err := bridgeCatalogRound(ctx, spec, defs, res); err != nil {
					return res, fmt.Errorf("bridge, %d-tool catalog: %w", len(defs), err)
				}
				continue
			}
			if err := rawCatalogRound(ctx, spec, len(defs), res); err != nil {
				// untested: the bridge's round fails first on the same server
				return res, fmt.Errorf("raw go-sdk, %d-tool catalog: %w", len(defs), err)
			}
		}
	}
	return res, nil
}

func bridgeCatalogRound(ctx context.Context, spec childSpec, defs []catalogDef, res *catalogResults) (err error) {
	start := time.Now()
	srv, reg, err := startBridge(ctx, catalogServer, spec, "")
	if err != nil {
		return err
	}
	total := time.Since(start)
	defer func() { err = errors.Join(err, srv.Close()) }()
	res.bridgeTotal = append(res.bridgeTotal, total)
	res.bridgeDiscover = append(res.bridgeDiscover, srv.Status().Discover)

	before := reg.List()
	if err := sameAsServer(before, defs); err != nil {
		return fmt.Errorf("after discovery: %w", err)
	}

	// Re-sync: the call makes the server send list_changed with the same
	// list; the bridge re-lists and swaps its registrations (which bumps
	// the registry version even though nothing changed).
	woken, cancel := reg.Watch()
	defer cancel()
	v0 := reg.Version()
	t0 := time.Now()
	out, err := reg.Execute(ctx, mcpclient.PublicToolName(catalogServer, touchTool), nil)
	if err != nil || out.IsError {
		// untested: the raw responder always answers touch
		return fmt.Errorf("calling %s: %v %v", touchTool, err, out.Error)
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for reg.Version() == v0 {
		select {
		case <-woken:
		case <-deadline.C: // untested: only if the bridge missed list_changed
			return errors.New("the re-sync did not update the registry within 30s of list_changed")
		case <-ctx.Done(): // untested: the benchmark's ctx ends only on a signal
			return ctx.Err()
		}
	}
	res.resync = append(res.resync, time.Since(t0))
	after := reg.List()
	if err := errors.Join(sameDefinitions(before, after), sameAsServer(after, defs)); err != nil {
		// untested here: the checks themselves are tested in TestSameDefinitions
		return fmt.Errorf("after the re-sync: %w", err)
	}
	res.compared = len(after)
	return nil
}

func rawCatalogRound(ctx context.Context, spec childSpec, n int, res *catalogResults) error {
	start := time.Now()
	sess, err := dialSDK(ctx, spec, "")
	if err != nil {
		return err
	}
	connected := time.Now()
	count, cursor := 0, ""
	for {
		page, err := sess.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			// untested: the raw responder answers every page it lists
			return errors.Join(fmt.Errorf("listing tools: %w", err), sess.Close())
		}
		count += len(page.Tools)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	end := time.Now()
	if err := sess.Close(); err != nil {
		// untested: the responder exits 0 when its stdin closes
		return fmt.Errorf("closing: %w", err)
	}
	if count != n {
		return fmt.Errorf("%d tools listed, want %d", count, n)
	}
	res.rawTotal = append(res.rawTotal, end.Sub(start))
	res.rawList = append(res.rawList, end.Sub(connected))
	return nil
}

// sameAsServer checks that the registry holds exactly defs under their
// public names, with description and schemas byte for byte as sent.
func sameAsServer(got []tool.Tool, defs []catalogDef) error {
	if len(got) != len(defs) {
		return fmt.Errorf("%d tools registered, want %d", len(got), len(defs))
	}
	byName := make(map[string]tool.Tool, len(got))
	for _, t := range got {
		byName[t.Name] = t
	}
	for _, d := range defs {
		public := mcpclient.PublicToolName(catalogServer, d.name)
		t, ok := byName[public]
		switch {
		case !ok:
			return fmt.Errorf("tool %q is not registered", public)
		case t.Description != d.description:
			return fmt.Errorf("tool %q: description %q, server sent %q", public, t.Description, d.description)
		case !bytes.Equal(t.InputSchema, d.inputSchema):
			return fmt.Errorf("tool %q: inputSchema %s, server sent %s", public, t.InputSchema, d.inputSchema)
		case !bytes.Equal(t.OutputSchema, d.outputSchema):
			return fmt.Errorf("tool %q: outputSchema %s, server sent %s", public, t.OutputSchema, d.outputSchema)
		}
	}
	return nil
}

// sameDefinitions checks that two List snapshots hold the same definitions
// byte for byte (the bodies are new closures and are not compared).
func sameDefinitions(a, b []tool.Tool) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d tools before, %d after", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Description != y.Description || !bytes.Equal(x.InputSchema, y.InputSchema) || !bytes.Equal(x.OutputSchema, y.OutputSchema) {
			return fmt.Errorf("tool %d differs: %q/%q", i, x.Name, y.Name)
		}
	}
	return nil
}
