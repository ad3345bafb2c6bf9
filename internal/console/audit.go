package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// maxAuditShown bounds the entries the audit page shows, newest first;
// export has no bound.
const maxAuditShown = 500

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

// trail is the audit file read once: its entries that match, and the
// chain's state.
type trail struct {
	File     string
	Entries  []audit.Entry
	Matched  int
	Lines    int
	Torn     int
	Broken   string // the first broken line, "" when the chain holds
	Outcomes []string
}

// readTrail reads and verifies the audit file, keeping the entries f
// matches, oldest first.
func readTrail(path string, f auditFilter) (trail, error) {
	t := trail{File: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return t, fmt.Errorf("reading the audit trail %s: %w", path, err)
	}
	rep, err := audit.Verify(bytes.NewReader(data))
	t.Lines, t.Torn = rep.Lines, rep.Torn
	var broken *audit.BrokenError
	if errors.As(err, &broken) {
		t.Broken = broken.Error()
	} else if err != nil {
		return t, err
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e audit.Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Method == "" {
			continue
		}
		seen[e.Outcome] = true
		if f.match(e) {
			t.Entries = append(t.Entries, e)
		}
	}
	t.Matched = len(t.Entries)
	for o := range seen {
		t.Outcomes = append(t.Outcomes, o)
	}
	slices.Sort(t.Outcomes)
	return t, nil
}

type auditData struct {
	Filter auditFilter
	Trail  trail
	None   string // why there is no trail to show
	Export string // the export link's query
}

func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, si *signin) {
	d := auditData{Export: r.URL.RawQuery}
	f, err := filterOf(r)
	d.Filter = f
	p := framed(si, "audit", "Audit", &d)
	path := ""
	if c.opts.Access != nil {
		path = c.opts.Access.AuditFile()
	}
	switch {
	case err != nil:
		p.Error = err.Error()
	case path == "":
		d.None = "The gateway entry writes no audit trail to a file: add audit: {file: PATH} to it."
	default:
		if d.Trail, err = readTrail(path, f); err != nil {
			p.Error = err.Error()
		}
		// Newest first, the most recent maxAuditShown.
		slices.Reverse(d.Trail.Entries)
		d.Trail.Entries = d.Trail.Entries[:min(len(d.Trail.Entries), maxAuditShown)]
	}
	c.render(w, r, http.StatusOK, "audit", p)
}

// auditExport sends the entries the filter matches as JSON lines, oldest
// first, as a download.
func (c *Console) auditExport(w http.ResponseWriter, r *http.Request, si *signin) {
	f, err := filterOf(r)
	if err != nil {
		http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
		return
	}
	path := ""
	if c.opts.Access != nil {
		path = c.opts.Access.AuditFile()
	}
	if path == "" {
		http.Error(w, "Not Found: the gateway entry writes no audit trail to a file", http.StatusNotFound)
		return
	}
	t, err := readTrail(path, f)
	if err != nil {
		http.Error(w, "Internal Server Error: "+err.Error(), http.StatusInternalServerError)
		return
	}
	c.log.Info("console audit export", "identity", si.viewer.Name, "entries", len(t.Entries))
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="audit.jsonl"`)
	enc := json.NewEncoder(w)
	for _, e := range t.Entries {
		enc.Encode(e)
	}
}
