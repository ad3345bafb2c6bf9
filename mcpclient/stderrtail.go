package mcpclient

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// tailBounds bound the lines a stderrTail keeps: how many, how long each
// (a longer one is cut), and how many bytes in all.
type tailBounds struct{ lines, lineBytes, bytes int }

// errorBounds bound the stderr an error quotes: a server that fails to
// start or dies usually says why on stderr (npm's "code ENOTCACHED", a
// traceback, a runtime out of memory), while the connection only saw EOF.
// The last lines hold the cause; more would drown the error they end.
var errorBounds = tailBounds{lines: 10, lineBytes: 240, bytes: 1500}

// RecentStderrLines bounds Status.Stderr, a server's recent stderr (what
// mcpbridge logs shows): its lines, each at most 4 KiB, 64 KiB in all.
const RecentStderrLines = 200

var recentBounds = tailBounds{lines: RecentStderrLines, lineBytes: 4 << 10, bytes: 64 << 10}

// minSecretLen is the shortest env or header value of an entry that is
// redacted from its child's stderr: shorter ones (ports, levels, flags)
// are not secrets worth shredding every line for.
const minSecretLen = 8

// redactor removes an entry's secrets from what its child writes on
// stderr, before the line is logged or kept.
type redactor struct {
	secrets []string // longest first, so a secret that holds another is replaced whole
}

// newRedactor redacts the values of cfg's env and headers that may be
// secrets (minSecretLen or longer).
func newRedactor(cfg Config) redactor {
	var out []string
	for _, m := range []map[string]string{cfg.Env, cfg.Headers} {
		for _, v := range slices.Sorted(maps.Values(m)) {
			if len(v) >= minSecretLen && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return redactor{secrets: out}
}

// line returns line with each secret shown as "[redacted]" and every URL
// cut to its scheme and host (redact.URLs).
func (r redactor) line(line string) string {
	for _, s := range r.secrets {
		line = strings.ReplaceAll(line, s, "[redacted]")
	}
	return redact.URLs(line)
}

// stderrTail keeps the last lines a child wrote on stderr (redacted by the
// caller), cut to bounds, each one line (control characters escaped).
// Safe for concurrent use: the child's stderr goroutine adds, the
// supervisor reads.
type stderrTail struct {
	bounds tailBounds

	mu    sync.Mutex
	lines []string
	size  int // bytes in lines
}

func newStderrTail(bounds tailBounds) *stderrTail { return &stderrTail{bounds: bounds} }

// add keeps line, a redacted line of stderr, escaped and cut, dropping the
// oldest lines beyond the bounds. Blank lines are skipped: they say
// nothing and push out lines that do.
func (t *stderrTail) add(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	line = t.shown(line)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line)
	for len(t.lines) > t.bounds.lines || t.size > t.bounds.bytes && len(t.lines) > 1 {
		t.size -= len(t.lines[0])
		t.lines = t.lines[1:]
	}
}

// shown is line as the tail keeps it: on one line, at most
// bounds.lineBytes long.
func (t *stderrTail) shown(line string) string {
	line = termsafe.Line(line)
	if len(line) <= t.bounds.lineBytes {
		return line
	}
	return textcut.Prefix(line, t.bounds.lineBytes) + "…"
}

// Lines returns the lines kept, oldest first.
func (t *stderrTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.lines)
}

// stderrSep joins the quoted lines on the one line of an error.
const stderrSep = " | "

// annotate returns err followed by the tail's lines, or err itself when
// the child wrote nothing on stderr. The result wraps err.
func (t *stderrTail) annotate(err error) error {
	lines := t.Lines()
	if err == nil || len(lines) == 0 {
		return err
	}
	return &stderrError{err: err, tail: strings.Join(lines, stderrSep)}
}

// stderrError is why a stdio server failed or died, with the last lines of
// its stderr, such as
//
//	connection closed: calling "initialize": client is closing: the server exited before answering initialize (child "npx" (pid 4242): exit status 1); stderr: npm error code ENOTCACHED | npm error request to https://registry.npmjs.org/… failed
type stderrError struct {
	err  error
	tail string
}

func (e *stderrError) Error() string { return e.err.Error() + "; stderr: " + e.tail }
func (e *stderrError) Unwrap() error { return e.err }

// hasStderr reports whether err already quotes a child's stderr.
func hasStderr(err error) bool {
	var se *stderrError
	return errors.As(err, &se)
}

// withExit returns err, the failure of a connection to a stdio child, with
// the child's own account of its end (exit), when that says more: the
// connection sees only EOF when the child exits before the handshake.
func withExit(err, exit error) error {
	if exit == nil || err == nil || strings.Contains(err.Error(), exit.Error()) {
		return err
	}
	return fmt.Errorf("%w (%v)", err, exit)
}
