package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/resourcetools"
	"github.com/mcpbridge/mcpbridge/tool"
)

// bridge is the host of one command, the registry it fills, and how its
// startup went.
type bridge struct {
	h        *host.Host
	reg      *tool.Registry
	statuses []host.Status // right after readiness, in plan order
	failed   []host.Status // enabled entries that are not ready
	elapsed  time.Duration // until readiness
	// resources keeps the model-facing resource tools registered.
	resources *resourcetools.Follower
	cat       *host.Catalog // for the tool-search entry's view
	src       *source       // what was started, for the summary line
}

// servers are the names of the servers b started, in config order.
func (b *bridge) servers() []string {
	var out []string
	for _, st := range b.statuses {
		if st.Plugin == clientkind.Name {
			out = append(out, st.Name)
		}
	}
	return out
}

// open runs src's entries on a one-shot host (in parallel) and waits until
// each first attempt has settled or hit its startupTimeoutMs. A server that
// fails is recorded in b.failed; the others keep working. Only an
// interrupted wait is an error. With f.json no progress is shown
// (docs/decisions.md §7); f.verbose shows the servers' log lines.
func (e *env) open(ctx context.Context, src *source, f *flags) (*bridge, error) {
	return e.openOAuth(ctx, src, f, e.oauthOptions(f))
}

// openOAuth is open with the given OAuth settings (a login's).
func (e *env) openOAuth(ctx context.Context, src *source, f *flags, o mcpclient.OAuthOptions) (*bridge, error) {
	e.elicitMode = f.elicit
	e.settleSampling(src.plan)
	if err := e.loadPins(src, f, false); err != nil {
		return nil, err
	}
	reg := tool.NewRegistry()
	cat := e.catalogOAuth(true, o)
	h, err := host.New(host.Options{
		Catalog:  cat,
		Registry: reg,
		Logger:   e.logger(f),
		Lookup:   e.lookup,
	})
	if err != nil {
		return nil, err // untested: the options above are always complete
	}
	b := &bridge{h: h, reg: reg, cat: cat, src: src, resources: resourcetools.Follow(reg)}
	stop := func() {}
	if !f.json {
		stop = e.progress(h, len(src.plan.Enabled()))
	}
	start := time.Now()
	// Start failures (failOnStartupError) are in the statuses too.
	_ = h.Apply(ctx, src.plan)
	b.elapsed = time.Since(start)
	b.resources.Refresh()
	stop()
	if ctx.Err() != nil {
		b.close()
		return nil, ctx.Err()
	}
	b.statuses = loginHints(h.Status(), f)
	for _, st := range b.statuses {
		if st.State != host.StateReady && st.State != host.StateDisabled {
			b.failed = append(b.failed, st)
		}
	}
	return b, nil
}

// reportFailures prints each failed server on stderr: its error, which
// may quote the server, escaped for the terminal, each of its errors on a
// line of its own.
func (e *env) reportFailures(b *bridge) {
	for _, st := range b.failed {
		fmt.Fprintf(e.Stderr, "mcpbridge: %s %s: %s\n", b.failedWhat(st), stateText(st.State), termsafe.Lines(st.Err))
	}
}

// failedWhat names a failed entry for its failure line: a server by its
// name, with its entry's id when the two differ (entries may share a
// serverName, one working, another refused for taking it), and any other
// entry by its id and, when known, its kind (a gateway is no server).
func (b *bridge) failedWhat(st host.Status) string {
	switch {
	case st.Plugin == clientkind.Name && st.Name == st.ID:
		return fmt.Sprintf("server %q", st.Name)
	case st.Plugin == clientkind.Name:
		return fmt.Sprintf("entry %q (server %q)", st.ID, st.Name)
	}
	if _, known := b.cat.Kind(st.Plugin); known {
		return fmt.Sprintf("%s entry %q", st.Plugin, st.ID)
	}
	return fmt.Sprintf("entry %q", st.ID)
}

func (b *bridge) close() {
	b.resources.Stop()
	b.h.Close()
}

// stateText is a state as a person reads it ("timed out").
func stateText(s host.State) string { return strings.ReplaceAll(string(s), "-", " ") }

// progress shows, on a terminal, which servers are still connecting. It
// returns a function that stops and erases the display.
func (e *env) progress(h *host.Host, total int) func() {
	if !e.StderrIsTerminal || total == 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			var waiting []string
			for _, st := range h.Status() {
				if st.State == host.StateStarting {
					waiting = append(waiting, st.Name)
				}
			}
			if len(waiting) > 0 {
				fmt.Fprintf(e.Stderr, "\r\033[K%s connecting %d/%d: %s", frames[i%len(frames)], total-len(waiting), total, strings.Join(waiting, ", "))
			}
			select {
			case <-done:
				fmt.Fprint(e.Stderr, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// serverCount counts the enabled entries of plan that are MCP servers
// (not a tool-search or sampling entry), and those of them that are
// ready.
func (b *bridge) serverCount(plan *host.Plan) (ready, total int) {
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == clientkind.Name {
			total++
		}
	}
	ready = total
	for _, st := range b.failed {
		if st.Plugin == clientkind.Name {
			ready--
		}
	}
	return ready, total
}

// summary is the line a listing ends with on stderr: what it found
// ("3 tools"), from how many servers, and the other entries that failed.
func (b *bridge) summary(found string) string {
	ready, total := b.serverCount(b.src.plan)
	return fmt.Sprintf("%s from %d of %d servers%s", found, ready, total, b.otherFailures())
}

// endListing flushes a listing's table and ends it with its summary.
func (e *env) endListing(w *tabwriter.Writer, b *bridge, found string) error {
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.Stderr, b.summary(found))
	e.sayNoServers(b)
	return nil
}

// sayNoServers says on stderr, when the config in use holds no servers,
// so and how to go on (source.noServers): an empty listing or an
// unknown tool is otherwise all the user sees.
func (e *env) sayNoServers(b *bridge) {
	if hint := b.src.noServers(); hint != "" {
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", hint)
	}
}

// otherFailures counts the failed entries serverCount leaves out (a
// gateway, an entry of an unknown or missing kind) for the summary line:
// "; 3 other entries failed", or "" when none did.
func (b *bridge) otherFailures() string {
	n := 0
	for _, st := range b.failed {
		if st.Plugin != clientkind.Name {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 other entry failed"
	}
	return fmt.Sprintf("; %d other entries failed", n)
}
