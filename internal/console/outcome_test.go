package console

import (
	"strings"
	"testing"
)

// A sign-in keeps a bounded number of form tokens and outcomes, each
// outcome of bounded size, and shows an outcome once: a viewer acting
// again and again, or a tool answering megabytes, cannot grow it.
func TestOutcomesAreBounded(t *testing.T) {
	var a actions
	first := a.issue()
	for range maxForms {
		a.issue()
	}
	if a.use(first) {
		t.Errorf("the token of a page %d forms old was accepted", maxForms+1)
	}
	tok := a.issue()
	if !a.use(tok) || a.use(tok) {
		t.Errorf("a form token was not accepted exactly once")
	}

	big := strings.Repeat("x", 4*maxOutcomeBytes)
	oldest := a.keep(outcome{path: "/p", done: "oldest"})
	var id string
	for range maxOutcomes {
		id = a.keep(outcome{path: "/p", result: &callResult{Texts: []string{big, big}, Structured: big}})
	}
	if _, ok := a.take(oldest, "/p"); ok {
		t.Errorf("the outcome %d actions old was still kept", maxOutcomes+1)
	}
	if _, ok := a.take(id, "/other"); ok {
		t.Errorf("an outcome was shown on another page than its own")
	}
	o, ok := a.take(id, "/p")
	if !ok {
		t.Fatal("the latest outcome was not kept")
	}
	n := len(o.result.Structured)
	for _, s := range o.result.Texts {
		n += len(s)
	}
	if n > maxOutcomeBytes+3*200 {
		t.Errorf("an outcome keeps %d bytes of its result, want about %d at most", n, maxOutcomeBytes)
	}
	if _, ok := a.take(id, "/p"); ok {
		t.Errorf("an outcome was shown twice")
	}
}
