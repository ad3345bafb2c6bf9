package cli

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcpbridge/mcpbridge/attach"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
)

// callProgress shows the progress notifications of a call on a terminal:
// one live line on stderr (the tool, done/total, the server's message),
// erased when the call ends, waiting while the server's form is asked.
// With --json, or when stderr is not a terminal, nothing is shown and the
// server is sent no progress token.
func (e *env) callProgress(ctx context.Context, name string, f *flags) (context.Context, func()) {
	if !e.StderrIsTerminal || f.json {
		return ctx, func() {}
	}
	var mu sync.Mutex
	shown, ended := false, false
	erase := func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprint(e.Stderr, "\r\033[K")
			shown = false
		}
	}
	ctx = tool.WithProgress(ctx, func(p tool.Progress) {
		line := termsafe.Line(name) + " " + progressText(p)
		e.term.showProgress(func() {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				return // held while a form was open, and the call is over
			}
			fmt.Fprintf(e.Stderr, "\r\033[K%s", line)
			shown = true
		}, erase)
	})
	return ctx, func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		e.term.showProgress(erase, nil)
	}
}

// progressText is "3/5 (60%) message", or "3 message" without a total,
// or the message alone when there is no count at all (a task's status).
func progressText(p tool.Progress) string {
	if p.Progress == 0 && p.Total == 0 && p.Message != "" {
		return termsafe.Line(p.Message)
	}
	s := number(p.Progress)
	if p.Total > 0 {
		s += fmt.Sprintf("/%s (%d%%)", number(p.Total), int(100*p.Progress/p.Total))
	}
	if p.Message != "" {
		s += " " + termsafe.Line(p.Message)
	}
	return s
}

// number writes a count without a needless fraction.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// resultText is the text call prints: the model's text, with the images
// and audio of the result saved in --save-dir (default: the per-user
// cache directory) and named in place.
func (e *env) resultText(ctx context.Context, f *flags, res tool.Result) string {
	store := attach.Dir(f.saveDir)
	if f.saveDir == "" {
		d, err := attach.DefaultDir()
		if err != nil {
			return res.Text() // untested: needs a system without a home directory
		}
		store = d
	}
	return attach.Text(ctx, store, res)
}
