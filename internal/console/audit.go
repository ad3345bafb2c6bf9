package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// Bounds of the audit page: it reads the trail backwards from its end (or
// from where the previous page stopped) in chunks, until a page is full
// or maxAuditScan bytes were read; the chain is verified once, then only
// in what the trail gained since (chainCache).
const (
	auditPageSize = 100
	auditChunk    = 64 << 10
	maxAuditScan  = 16 << 20
)

// auditFilter is the audit page's query: each field given must match.
type auditFilter struct {
	Identity, Tool, Outcome string
	Since, Until            string // as typed: 2006-01-02T15:04 or RFC 3339
	since, until            time.Time
}

// filterOf reads the filter from a query; a time that does not parse is
// an error saying the forms it takes.
func filterOf(r *http.Request) (auditFilter, error) {
	q := r.URL.Query()
	f := auditFilter{Identity: strings.TrimSpace(q.Get("identity")), Tool: strings.TrimSpace(q.Get("tool")),
		Outcome: strings.TrimSpace(q.Get("outcome")), Since: q.Get("since"), Until: q.Get("until")}
	var err error
	if f.since, err = parseTime("since", f.Since); err != nil {
		return f, err
	}
	f.until, err = parseTime("until", f.Until)
	return f, err
}

// query is f as a URL query, for the export and older links.
func (f auditFilter) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"identity": f.Identity, "tool": f.Tool, "outcome": f.Outcome, "since": f.Since, "until": f.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func parseTime(what, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%s %q is not a time: write it as 2026-01-02T15:04 (UTC) or RFC 3339", what, s)
}

func (f auditFilter) match(e audit.Entry) bool {
	return (f.Identity == "" || e.Identity == f.Identity) &&
		(f.Tool == "" || e.Name == f.Tool) &&
		(f.Outcome == "" || e.Outcome == f.Outcome) &&
		(f.since.IsZero() || !e.Time.Before(f.since)) &&
		(f.until.IsZero() || e.Time.Before(f.until))
}

// entryOf decodes an audit line; false for a line that is no chained
// entry (torn, or put there without a prev: verify says which).
func entryOf(line []byte) (audit.Entry, bool) {
	var e audit.Entry
	return e, json.Unmarshal(line, &e) == nil && e.Method != "" && e.Prev != ""
}

// auditFile is the trail as a request reads it: an *os.File (tests count
// what is read through a wrapper).
type auditFile interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

func openAudit(path string) (auditFile, error) { return os.Open(path) }

// pageBack is a page of the trail read backwards.
type pageBack struct {
	Entries  []audit.Entry // newest first
	Older    int64         // where an older page ends; -1 when none is left
	Scanned  int64         // bytes read
	Outcomes []string      // seen among the lines read, for the filter's list
}

// readBack reads the entries keep takes from the lines of f that end
// before end, newest first, in chunks from end backwards, until want are
// found, maxScan bytes are read, or the trail's start. A last line
// without its newline (a write in progress, or torn) is left out. Memory
// is bounded by a chunk and the longest line within maxScan, whatever f's
// size; a line longer than that is passed over (Older goes on inside it).
func readBack(f io.ReaderAt, end int64, keep func(audit.Entry) bool, want int, maxScan int64) (pageBack, error) {
	p := pageBack{Older: -1}
	seen := map[string]bool{}
	var carry []byte // the end of a line that starts before pos, its newline included
	size := int64(auditChunk)
	for pos, first := end, true; pos > 0; first = false {
		start := max(0, pos-size)
		buf := make([]byte, int(pos-start)+len(carry))
		if _, err := f.ReadAt(buf[:pos-start], start); err != nil && !errors.Is(err, io.EOF) {
			return p, fmt.Errorf("reading the audit trail: %w", err)
		}
		copy(buf[pos-start:], carry)
		p.Scanned += pos - start
		if first { // leave out a line still being written
			buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
		}
		// Complete lines are those after the chunk's first newline, or
		// all of them at the trail's start.
		head := 0
		if start > 0 {
			head = bytes.IndexByte(buf, '\n') + 1
			if head == 0 || head == len(buf) { // one line longer than the chunk (or the carry's own end): read on
				// as much again, so that reading the line stays linear
				carry, pos, size = buf, start, max(auditChunk, int64(len(buf)))
				if p.Scanned >= maxScan {
					p.Older = start
					break
				}
				continue
			}
		}
		size = auditChunk
		lineEnd := len(buf)
		for lineEnd > head {
			lineStart := bytes.LastIndexByte(buf[:lineEnd-1], '\n') + 1
			lineStart = max(lineStart, head)
			if e, ok := entryOf(buf[lineStart : lineEnd-1]); ok {
				seen[e.Outcome] = true
				if keep(e) {
					p.Entries = append(p.Entries, e)
				}
			}
			lineEnd = lineStart
			if len(p.Entries) == want {
				p.Older = start + int64(lineStart)
				break
			}
		}
		carry, pos = slices.Clone(buf[:head]), start
		if p.Older < 0 && pos > 0 && p.Scanned >= maxScan {
			p.Older = start + int64(head) // not full: the next page goes on from here
		}
		if p.Older >= 0 {
			break
		}
	}
	if p.Older == 0 {
		p.Older = -1
	}
	for o := range seen {
		p.Outcomes = append(p.Outcomes, o)
	}
	slices.Sort(p.Outcomes)
	return p, nil
}

// chainCache is the verification of the audit trail so far: each page
// verifies only what the trail gained since the last one. A trail
// replaced (rotated) or shorter than what was verified is verified again
// from its start. Safe for concurrent use.
type chainCache struct {
	mu    sync.Mutex
	path  string
	info  fs.FileInfo
	chain audit.Chain
}

// chainState is the chain's verification as the page shows it.
type chainState struct {
	Lines, Torn int
	Broken      string // the first broken line, "" when the chain holds
	Read        int64  // bytes read to verify it this time
}

// verify brings the verification of path, open as f, up to f's end.
func (cc *chainCache) verify(path string, f auditFile) (chainState, error) {
	info, err := f.Stat()
	if err != nil {
		return chainState{}, fmt.Errorf("reading the audit trail %s: %w", path, err)
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if path != cc.path || cc.info == nil || !os.SameFile(info, cc.info) || info.Size() < cc.chain.Offset {
		cc.path, cc.chain = path, audit.Chain{}
	}
	cc.info = info
	from := cc.chain.Offset
	tail, err := cc.chain.Continue(io.NewSectionReader(f, from, info.Size()-from))
	st := chainState{Lines: cc.chain.Lines, Torn: cc.chain.Torn, Read: info.Size() - from}
	if tail > 0 {
		st.Torn++ // a line still being written, or torn by a crash
	}
	var broken *audit.BrokenError
	if errors.As(err, &broken) {
		st.Broken, err = broken.Error(), nil
	}
	return st, err
}

// auditData is the audit page.
type auditData struct {
	Filter auditFilter
	File   string
	Chain  chainState
	Page   pageBack
	None   string       // why there is no trail to show
	Export template.URL // the export link
	Older  template.URL // the older page's link, "" when there is none
	Newest bool         // the page starts at the trail's end
}

// auditLink is a link to the audit page (or under it) with query q: built
// here from values escaped by Encode, so the template takes it as it is
// (it would escape the query's own & and =).
func auditLink(under string, q url.Values) template.URL {
	return template.URL(gateway.ConsolePath + "/audit" + under + "?" + q.Encode())
}

// auditPath is the trail's file, "" when the gateway writes none.
func (c *Console) auditPath() string {
	if c.opts.Access == nil {
		return ""
	}
	return c.opts.Access.AuditFile()
}

func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, si *signin) {
	f, err := filterOf(r)
	d := &auditData{Filter: f, Export: auditLink("/export", f.query()), File: c.auditPath()}
	p := framed(si, "audit", "Audit", d)
	switch {
	case err != nil:
		p.Error = err.Error()
	case d.File == "":
		d.None = "The gateway entry writes no audit trail to a file: add audit: {file: PATH} to it."
	default:
		if err := c.fillAudit(d, r.URL.Query().Get("before"), seesEntry(c.screenOf(r.Context(), si))); err != nil {
			p.Error = err.Error()
		}
	}
	c.render(w, r, http.StatusOK, "audit", p)
}

// fillAudit verifies the chain and reads the page that ends at before
// ("" for the trail's end), of the entries the filter and sees take.
func (c *Console) fillAudit(d *auditData, before string, sees func(audit.Entry) bool) error {
	file, err := openAudit(d.File)
	if err != nil {
		return fmt.Errorf("reading the audit trail %s: %w", d.File, err)
	}
	defer file.Close()
	if d.Chain, err = c.chain.verify(d.File, file); err != nil {
		return err
	}
	info, err := file.Stat()
	if err != nil {
		return err
	}
	end := info.Size()
	d.Newest = before == ""
	if !d.Newest {
		if end, err = strconv.ParseInt(before, 10, 64); err != nil || end < 0 || end > info.Size() {
			return fmt.Errorf("before=%q is not a place in the audit trail (0 to %d): follow the page's Older link", before, info.Size())
		}
	}
	keep := func(e audit.Entry) bool { return d.Filter.match(e) && sees(e) }
	if d.Page, err = readBack(file, end, keep, auditPageSize, maxAuditScan); err != nil {
		return err
	}
	if d.Page.Older >= 0 {
		q := d.Filter.query()
		q.Set("before", strconv.FormatInt(d.Page.Older, 10))
		d.Older = auditLink("", q)
	}
	return nil
}

// seesEntry says whether a viewer who sees what sees lets through may
// read an entry: one of a tool, prompt or resource hidden from them is
// not shown (its line would tell them it exists); the console's own
// entries (restart, reload) are.
func seesEntry(sees func(gateway.Offer, string) bool) func(audit.Entry) bool {
	return func(e audit.Entry) bool {
		return strings.HasPrefix(e.Method, "console/") || seesCall(sees, e.Method, e.Name, e.Server)
	}
}

// seesCall says whether a viewer who sees what sees lets through may see
// a call of method on name (a resource's URI, of server), judged as the
// Gate judges the call: a prompt by its name, a resource by its server,
// any other call as a tool's.
func seesCall(sees func(gateway.Offer, string) bool, method, name, server string) bool {
	switch method {
	case gateway.MethodGetPrompt:
		return sees(gateway.OfferPrompt, name)
	case gateway.MethodReadResource:
		return sees(gateway.OfferResource, server)
	}
	return sees(gateway.OfferTool, name)
}

// auditExport streams the entries the filter matches, oldest first, as
// the trail's own lines (so the export verifies as a chain where it is
// whole), reading the trail forwards a buffer at a time.
func (c *Console) auditExport(w http.ResponseWriter, r *http.Request, si *signin) {
	f, err := filterOf(r)
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	path := c.auditPath()
	if path == "" {
		http.Error(w, "Not Found: the gateway entry writes no audit trail to a file", http.StatusNotFound)
		return
	}
	file, err := openAudit(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("Internal Server Error: reading the audit trail %s: %v", path, err), http.StatusInternalServerError)
		return
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		http.Error(w, "Internal Server Error: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="audit.jsonl"`)
	sees := seesEntry(c.screenOf(r.Context(), si))
	n, err := exportLines(w, io.NewSectionReader(file, 0, info.Size()), func(e audit.Entry) bool { return f.match(e) && sees(e) })
	if err != nil {
		// The status went out with the first lines: only a broken
		// response tells the viewer the export is not whole.
		c.log.Warn("console audit export cut short", "identity", si.viewer.Name, "entries", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	c.log.Info("console audit export", "identity", si.viewer.Name, "entries", n)
}

// exportLines writes the complete lines of r that are entries keep takes,
// and returns how many.
func exportLines(w io.Writer, r io.Reader, keep func(audit.Entry) bool) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxAuditScan)
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	for sc.Scan() {
		if e, ok := entryOf(sc.Bytes()); ok && keep(e) {
			bw.Write(sc.Bytes())
			if err := bw.WriteByte('\n'); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, errors.Join(sc.Err(), bw.Flush())
}
