package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// bridge is the servers of one command and the registry they fill.
type bridge struct {
	reg     *tool.Registry
	servers []*mcpclient.Server
	failed  []serverFailure
}

type serverFailure struct {
	name string
	err  error
}

// open starts every server of src in parallel and waits until each first
// attempt has settled. A server that fails is recorded in b.failed; the
// others keep working. Only an interrupted wait is an error.
func (e *env) open(ctx context.Context, src *source, verbose bool) (*bridge, error) {
	b := &bridge{reg: tool.NewRegistry()}
	log := e.logger(verbose)
	for _, en := range src.entries {
		cfg := en.cfg
		s, err := mcpclient.Start(cfg, mcpclient.Options{
			Registry: b.reg,
			Logger:   log.With("server", cfg.ServerName),
			Environ:  e.Environ,
			OneShot:  true,
		})
		if err != nil {
			b.failed = append(b.failed, serverFailure{cfg.ServerName, err})
			continue
		}
		b.servers = append(b.servers, s)
	}
	stop := e.progress(b.servers)
	var wg sync.WaitGroup
	errs := make([]error, len(b.servers))
	for i, s := range b.servers {
		wg.Go(func() { errs[i] = s.WaitReady(ctx) })
	}
	wg.Wait()
	stop()
	if ctx.Err() != nil {
		b.close()
		return nil, ctx.Err()
	}
	for i, s := range b.servers {
		st := s.Status()
		switch {
		case errs[i] != nil:
			b.failed = append(b.failed, serverFailure{st.ServerName, errs[i]})
		case st.State == mcpclient.StateFailed:
			b.failed = append(b.failed, serverFailure{st.ServerName, errors.New(st.Err)})
		}
	}
	return b, nil
}

// reportFailures prints one line per failed server on stderr.
func (e *env) reportFailures(b *bridge) {
	for _, f := range b.failed {
		fmt.Fprintf(e.Stderr, "mcpbridge: server %q failed: %v\n", f.name, f.err)
	}
}

func (b *bridge) close() {
	var wg sync.WaitGroup
	for _, s := range b.servers {
		wg.Go(func() { s.Close() })
	}
	wg.Wait()
}

// progress shows, on a terminal, which servers are still connecting. It
// returns a function that stops and erases the display.
func (e *env) progress(servers []*mcpclient.Server) func() {
	if !e.StderrIsTerminal || len(servers) == 0 {
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
			for _, s := range servers {
				select {
				case <-s.Ready():
				default:
					waiting = append(waiting, s.Config().ServerName)
				}
			}
			if len(waiting) > 0 {
				fmt.Fprintf(e.Stderr, "\r\033[K%s connecting %d/%d: %s", frames[i%len(frames)], len(servers)-len(waiting), len(servers), strings.Join(waiting, ", "))
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
