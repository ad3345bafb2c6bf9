package mcpclient

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Sandbox is the sandbox block of a stdio entry (docs/sandbox.md): what
// the server may read and write besides the system and its own runtime,
// whether it has the network, whether a kernel without Landlock may run
// it unconfined, and its resource limits.
type Sandbox = sandbox.Spec

// sandboxKeys are the keys of the sandbox block, in documentation order.
func sandboxKeys() []string {
	return []string{"read", "write", "network", "bestEffort", "memoryMiB", "processes", "openFiles"}
}

// maxLimit bounds each resource limit: far above any sensible value, far
// below an overflow when MiB become bytes.
const maxLimit = 1 << 30

// decodeSandbox reads the sandbox block; nil when absent. Its paths have
// ${VAR} and a leading ~ expanded. Whether they exist is checked when the
// server starts, so that one entry's missing directory fails that entry
// alone (and by validate, which starts nothing).
func decodeSandbox(d *yamlconf.Decoder, m *yamlconf.Map) *Sandbox {
	n := m.Value("sandbox")
	if n != nil && yamlconf.IsNull(n) {
		// "sandbox:" with every key commented out reads as null: taken
		// for absent, the server would run unconfined without a word.
		m.Errorf("sandbox", "is empty: write sandbox: {} to confine the server with the defaults (no network, read only the system and its own runtime), or remove the key to run it unconfined")
		return nil
	}
	b, ok := d.Map(n, m.Path("sandbox"))
	if !ok {
		return nil
	}
	b.RejectFunc(sandboxKeys(), func(k string) string {
		return fmt.Sprintf("%q is not a sandbox key (valid keys: %s)", k, strings.Join(sandboxKeys(), ", "))
	})
	var s Sandbox
	s.Read = expandedPaths(d, b, "read")
	s.Write = expandedPaths(d, b, "write")
	s.Network, _ = b.Bool("network")
	s.BestEffort, _ = b.Bool("bestEffort")
	s.MemoryMiB, _ = b.Int("memoryMiB", 1, maxLimit)
	s.Processes, _ = b.Int("processes", 1, maxLimit)
	s.OpenFiles, _ = b.Int("openFiles", 1, maxLimit)
	return &s
}

// expandedPaths reads the list of paths at key with ${VAR} expanded and,
// as a shell does, a leading ~ (alone or before a /) replaced by the home
// directory: only where the file writes it, not where a variable's value
// starts with one. ~user is refused rather than looked up.
func expandedPaths(d *yamlconf.Decoder, b *yamlconf.Map, key string) []string {
	paths, ok := b.ExpandStringList(key)
	if !ok {
		return paths
	}
	items := yamlconf.Resolve(b.Value(key)).Content
	for i, path := range paths {
		item, at := yamlconf.Resolve(items[i]), fmt.Sprintf("%s[%d]", b.Path(key), i)
		written := item.Value
		if !strings.HasPrefix(written, "~") {
			continue
		}
		if user, _, _ := strings.Cut(written, "/"); user != "~" {
			d.Errorf(item, at, "%s: only ~ alone or before a / stands for the home directory (~user is not looked up): write the path in full", user)
			continue
		}
		home, _ := d.Expand(item, at, "${HOME:-}")
		if home == "" {
			d.Errorf(item, at, "~ stands for the home directory, and HOME is not set: write the path in full")
			continue
		}
		paths[i] = home + path[1:]
	}
	return paths
}

// checkSandbox checks a sandbox block: stdio only, paths not empty and
// free of NUL, limits in range.
func (c Config) checkSandbox(report reportFunc) {
	s := c.Sandbox
	if s == nil {
		return
	}
	if c.Transport != TransportStdio && c.Transport != "" {
		report("sandbox is only valid with transport: stdio (it confines a child process)", "sandbox")
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}} {
		for i, p := range list.paths {
			if p == "" || strings.ContainsRune(p, 0) {
				report("must be a path: not empty, without NUL characters", fmt.Sprintf("sandbox.%s[%d]", list.key, i))
			}
		}
	}
	for _, l := range []struct {
		key   string
		value int64
	}{{"memoryMiB", s.MemoryMiB}, {"processes", s.Processes}, {"openFiles", s.OpenFiles}} {
		if l.value < 0 || l.value > maxLimit {
			report(fmt.Sprintf("must be between 1 and %d (0 or absent: no limit)", maxLimit), "sandbox."+l.key)
		}
	}
}

// cloneSandbox returns a deep copy of s.
func cloneSandbox(s *Sandbox) *Sandbox {
	if s == nil {
		return nil
	}
	out := *s
	out.Read, out.Write = slices.Clone(s.Read), slices.Clone(s.Write)
	return &out
}

// sandboxStatus is what status shows of a child's sandbox plan.
func sandboxStatus(p *sandbox.Plan) *SandboxStatus {
	if p == nil {
		return nil
	}
	return &SandboxStatus{LandlockABI: p.ABI, Network: p.Network}
}

// withDenials returns st with what the sandbox has denied the running
// child p so far (nil p: none), as one line each.
func withDenials(st *SandboxStatus, p *childproc.Process) *SandboxStatus {
	if st == nil || p == nil {
		return st
	}
	out := *st
	out.Denied = denialLines(p.SandboxDenials())
	return &out
}

// sandboxDenied returns err, why a sandboxed child's connection failed or
// ended, with what the sandbox denied the child, as its stderr said: the
// cause that a bare EOF hides, and what to add to allow it. Once the child
// has exited its stderr is read whole; while it runs, err is returned as
// it is.
func (g *generation) sandboxDenied(err error) error {
	p := g.process()
	if err == nil || p == nil || p.Sandbox() == nil {
		return err
	}
	select {
	case <-p.Exited():
	default:
		return err
	}
	lines := denialLines(p.SandboxDenials())
	if len(lines) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s", err, strings.Join(lines, "; "))
}

// withDenial returns text, a tool's error, with a line saying what the
// sandbox denied when it names a path the sandbox refused: beside the
// server's bare EACCES, the user and the model read what to add to the
// sandbox block (the wire result a gateway forwards is left as it is).
// status keeps it too.
func (g *generation) withDenial(text string) string {
	p := g.process()
	if p == nil {
		return text
	}
	d, ok := p.ExplainDenial(text)
	if !ok {
		return text
	}
	return text + "\nmcpbridge: " + d.String()
}

func denialLines(ds []sandbox.Denial) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}
