package mcpclient

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// ShareSession (share: session) runs one instance of the server per
// consumer session (a gateway client's), for servers that keep per-user
// state: the entry's own instance lists the tools, and a session's calls
// go to the session's instance, started with its first call and closed
// when the session ends.
const ShareSession = "session"

// MaxSessionInstances bounds the instances of one share: session server
// running at once; a call from a session past it fails, naming the limit.
const MaxSessionInstances = 16

// sessionInstances are the instances of a share: session server, by
// session. The zero value is ready to use.
type sessionInstances struct {
	mu     sync.Mutex
	byKey  map[tool.Session]*sessionInstance // guarded by mu
	reaper sync.WaitGroup                    // one goroutine per instance
}

// sessionInstance is one session's instance; its fields are set before
// ready is closed.
type sessionInstance struct {
	ready chan struct{}
	srv   *Server
	reg   *tool.Registry // the instance's own: never a consumer's
	err   error
}

// callInSession runs rt's tool on the instance of session.
func (s *Server) callInSession(ctx context.Context, session tool.Session, rt *remoteTool, args []byte) (tool.Output, error) {
	inst, err := s.instanceOf(ctx, session)
	if err != nil {
		return tool.Output{}, err
	}
	t, ok := inst.reg.Get(rt.public)
	if !ok {
		return tool.Output{}, fmt.Errorf("%s: this client session's instance of the server does not offer %q", s.prefix, rt.raw)
	}
	return t.Execute(ctx, args)
}

// instanceOf returns the instance of session, starting it on first use.
func (s *Server) instanceOf(ctx context.Context, session tool.Session) (*sessionInstance, error) {
	s.shared.mu.Lock()
	inst, ok := s.shared.byKey[session]
	if !ok {
		if len(s.shared.byKey) >= MaxSessionInstances {
			s.shared.mu.Unlock()
			return nil, fmt.Errorf("%s: %d client sessions have an instance of this server already, the bridge's limit (share: session)", s.prefix, MaxSessionInstances)
		}
		if s.shared.byKey == nil {
			s.shared.byKey = make(map[tool.Session]*sessionInstance)
		}
		inst = &sessionInstance{ready: make(chan struct{})}
		s.shared.byKey[session] = inst
		s.shared.reaper.Go(func() { s.runInstance(inst, session) })
	}
	s.shared.mu.Unlock()
	select {
	case <-inst.ready:
		return inst, inst.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runInstance starts inst, and closes it when its session ends or the
// server closes; an instance that fails to start is forgotten at once, so
// the session's next call tries again.
func (s *Server) runInstance(inst *sessionInstance, session tool.Session) {
	defer func() {
		s.shared.mu.Lock()
		delete(s.shared.byKey, session)
		s.shared.mu.Unlock()
	}()
	cfg, opts := s.cfg, s.opts
	cfg.Share = ""
	inst.reg = tool.NewRegistry()
	opts.Registry, opts.Source = inst.reg, nil
	inst.srv, inst.err = Start(cfg, opts)
	if inst.err == nil {
		inst.err = inst.srv.WaitReady(s.ctx)
	}
	if inst.err != nil {
		inst.err = fmt.Errorf("%s: starting this client session's instance: %w", s.prefix, inst.err)
	} else {
		s.log.Info("instance started for a client session (share: session)")
	}
	close(inst.ready)
	if inst.err == nil {
		select {
		case <-session.Done():
		case <-s.ctx.Done():
		}
	}
	if inst.srv != nil {
		inst.srv.Close()
	}
}
