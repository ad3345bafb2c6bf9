package console

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// Bounds of what a sign-in keeps of its forms and its actions' outcomes:
// the form tokens of its latest pages, the outcomes not shown yet, and the
// text of a tried call's result an outcome holds.
const (
	maxForms        = 64
	maxOutcomes     = 8
	maxOutcomeBytes = 64 << 10
)

// outcome is what an action did, kept to be shown once on the page the
// action redirects to (Post/Redirect/Get: reloading that page shows it
// again, never does it again).
type outcome struct {
	path   string // the page it belongs to
	done   string
	err    string
	result *callResult
	fields []field // a try-it form's values
}

// actions are a sign-in's one-time form tokens and its actions' outcomes
// not shown yet. Copies of a signin share them.
type actions struct {
	mu       sync.Mutex
	forms    []string // tokens issued, oldest first
	outcomes []outcomeEntry
}

type outcomeEntry struct {
	id string
	outcome
}

// issue returns a new form token; past maxForms the oldest is forgotten
// (a page that old must be opened again to send its form).
func (a *actions) issue() string {
	tok := randomHex()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.forms) >= maxForms {
		a.forms = a.forms[1:]
	}
	a.forms = append(a.forms, tok)
	return tok
}

// use spends token: true once for a token issued and not spent yet, so a
// form sent again (a browser reload of the answer, a replay) does nothing.
func (a *actions) use(token string) bool {
	if token == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.forms, func(t string) bool { return subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 })
	if i < 0 {
		return false
	}
	a.forms = slices.Delete(a.forms, i, i+1)
	return true
}

// keep stores o and returns its id; past maxOutcomes the oldest not shown
// is dropped.
func (a *actions) keep(o outcome) string {
	if o.result != nil {
		o.result = o.result.bounded(maxOutcomeBytes)
	}
	id := randomHex()[:32]
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.outcomes) >= maxOutcomes {
		a.outcomes = a.outcomes[1:]
	}
	a.outcomes = append(a.outcomes, outcomeEntry{id, o})
	return id
}

// take returns, and forgets, the outcome of id if it belongs to path.
func (a *actions) take(id, path string) (outcome, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.outcomes, func(e outcomeEntry) bool { return e.id == id && e.path == path })
	if i < 0 {
		return outcome{}, false
	}
	o := a.outcomes[i].outcome
	a.outcomes = slices.Delete(a.outcomes, i, i+1)
	return o, true
}

// redirect keeps o for si and answers 303 to o's page, which shows it.
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, si *signin, o outcome) {
	id := si.acts.keep(o)
	to := url.URL{Path: o.path, RawQuery: url.Values{"outcome": {id}}.Encode()}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

// outcomeOf is the outcome r's page is to show (once), if any.
func outcomeOf(r *http.Request, si *signin) (outcome, bool) {
	id := r.URL.Query().Get("outcome")
	if id == "" {
		return outcome{}, false
	}
	return si.acts.take(id, r.URL.Path)
}

// bounded is r with its texts cut to about limit bytes in all: an
// outcome kept for a sign-in must not hold a tool's whole answer when
// that is large.
func (r *callResult) bounded(limit int) *callResult {
	out := *r
	left := limit
	cut := func(s string) string {
		if len(s) <= left {
			left -= len(s)
			return s
		}
		s = textcut.Prefix(s, left) + " … (cut: the answer is larger than the console keeps)"
		left = 0
		return s
	}
	out.Texts = nil
	for _, t := range r.Texts {
		out.Texts = append(out.Texts, cut(t))
	}
	out.Structured = cut(r.Structured)
	out.Images = nil
	for _, img := range r.Images {
		if len(img) > left {
			out.Other = append(out.Other, "image (too large to keep)")
			continue
		}
		left -= len(img)
		out.Images = append(out.Images, img)
	}
	return &out
}
