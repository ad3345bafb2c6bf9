package childproc

import (
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// maxDenials bounds the denials a Process keeps: the first few say what
// is missing, and a server denied in a loop must not grow the list.
const maxDenials = 8

// denials is what the sandbox denied a child, as its stderr said.
type denials struct {
	plan *sandbox.Plan // nil when not sandboxed
	home string        // the child's HOME, for the runtime managers' directories
	mu   sync.Mutex
	list []sandbox.Denial
}

// note records the path text (a line of the child's stderr, or a tool's
// error) says the sandbox denied, and returns it; false when it names none.
func (d *denials) note(text string) (sandbox.Denial, bool) {
	if d.plan == nil {
		return sandbox.Denial{}, false
	}
	den, ok := d.plan.Explain(text, d.home)
	if !ok {
		return den, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.list) < maxDenials && !slices.Contains(d.list, den) {
		d.list = append(d.list, den)
	}
	return den, true
}

// ExplainDenial returns the path that text, what the child answered (a
// tool's error), says the sandbox denied it, and keeps it among
// SandboxDenials; false when text names none, or the child is not
// sandboxed.
func (p *Process) ExplainDenial(text string) (sandbox.Denial, bool) { return p.denied.note(text) }

// SandboxDenials returns the paths the sandbox denied the child, as far as
// its stderr said (a line naming a path with a permission error that the
// sandbox, not the file's permissions, explains), each once, the first
// eight: what to add to the sandbox block to allow them. nil when the
// child is not sandboxed, has no Stderr handler, or was denied nothing.
func (p *Process) SandboxDenials() []sandbox.Denial {
	p.denied.mu.Lock()
	defer p.denied.mu.Unlock()
	return slices.Clone(p.denied.list)
}

// home returns the HOME of env, or "".
func home(env []string) string {
	h, _ := lookupEnv(env, "HOME")
	return h
}
