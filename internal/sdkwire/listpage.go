package sdkwire

import (
	"bytes"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// tools/list pages (assumptions 9–11 of the package doc).

var (
	xMCPHeader    = []byte("x-mcp-header")
	unicodeEscape = []byte(`\u`)
)

// HeaderCandidate reports whether the raw JSON of a tool definition, or of
// its inputSchema, may carry an x-mcp-header annotation as the SDK reads
// it: it contains the key as written, or a \u escape, which could spell it
// ("x-mcp-\u0068eader" decodes to the same key). A false positive costs the
// SDK one more decoded tool; a false negative would lose the tool's
// Mcp-Param-* headers, so the test errs on the loose side.
//
// A tool the SDK may drop is always a candidate, and a tool is always a
// candidate when its inputSchema is: a caller that applies HeaderCandidate
// to the inputSchema of the tools it parsed itself checks only tools the
// SDK was handed (Mode HeaderToolsPage).
func HeaderCandidate(raw []byte) bool {
	return bytes.Contains(raw, xMCPHeader) || bytes.Contains(raw, unicodeEscape)
}

// headerToolsPage returns the tools/list result page with its tools array
// cut down to the HeaderCandidate tools, every other member as sent, and
// whether it changed anything. Anything else than an object is handed to
// the SDK unchanged, to report as it does.
//
// The page is not validated again: every response read from a connection
// was decoded from JSON that its decoder checked (assumption 12), which
// saves a json.Valid pass, two thirds of the work here. Should a page be
// malformed after all, the walk may run off its end; the page then goes to
// the SDK as it came.
func headerToolsPage(page []byte) (out []byte, changed bool) {
	if len(page) == 0 || page[0] != '{' {
		return page, false
	}
	defer func() {
		if recover() != nil {
			out, changed = page, false
		}
	}()
	candidates := HeaderCandidate(page) // none at all: skip the per-tool test
	var b []byte
	last := 0
	for key, val := range projection.Members(page) {
		if val[0] != '[' || !projection.KeyIs(key, "tools") {
			continue
		}
		start := cap(page) - cap(val) // val is a sub-slice of page
		b = append(b, page[last:start]...)
		b = append(b, '[')
		if candidates {
			b = appendCandidates(b, val)
		}
		b = append(b, ']')
		last = start + len(val)
	}
	if b == nil {
		return page, false // no tools array: nothing to cut
	}
	return append(b, page[last:]...), true
}

// appendCandidates appends the HeaderCandidate elements of the array arr to
// dst, comma-separated.
func appendCandidates(dst, arr []byte) []byte {
	first := true
	for tool := range projection.Elements(arr) {
		if !HeaderCandidate(tool) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, tool...)
		first = false
	}
	return dst
}
