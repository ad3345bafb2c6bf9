package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// slowSkillsGateway is a gateway whose one backend, sk, is the skills
// fixture as a real child whose process takes 1.5 s to start; the gateway
// is ready once the backend's first start has settled, as serve's host
// makes it.
func slowSkillsGateway(t *testing.T, opts Options) *Gateway {
	t.Helper()
	reg := tool.NewRegistry()
	ready := make(chan struct{})
	opts.Ready = ready
	g := newGateway(t, reg, opts)
	cmd, args, env := skillpeer.ChildCommand(t, "")
	c, err := mcpclient.Start(mcpclient.Config{ServerName: "sk", Transport: mcpclient.TransportStdio,
		Command: "sh", Args: append([]string{"-c", `sleep 1.5; exec "$0" "$@"`, cmd}, args...), Env: env},
		mcpclient.Options{Registry: reg})
	if err != nil {
		t.Fatalf("starting sk: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	var started error
	go func() {
		started = c.WaitReady(ctx)
		close(ready)
	}()
	t.Cleanup(func() {
		if <-ready; started != nil {
			t.Errorf("sk did not start: %v", started)
		}
	})
	return g
}

// skillsAsked are the skills requests a client sends right after it
// connects, and what each answer must hold once sk has started.
var skillsAsked = []struct{ method, params, want string }{
	{"skills/list", `{}`, `"uri":"skill://sk/pdf-processing/SKILL.md"`},
	{"skills/get", `{"uri":"skill://sk/pdf-processing/SKILL.md"}`, `"skill":{`},
	{"resources/directory/read", `{"uri":"skill://sk/pdf-processing"}`, `"uri":"skill://sk/pdf-processing/SKILL.md"`},
}

// askSkillsBeforeReady sends every skillsAsked request while g is not
// ready yet, through send (which sends a request with an id and returns
// a function giving its answer), and checks each answer has sk's skill.
func askSkillsBeforeReady(t *testing.T, g *Gateway, send func(id int, method, params string) func() string) {
	t.Helper()
	if g.isReady() {
		t.Fatal("the gateway was ready before the requests were sent: the backend started too fast to test the wait")
	}
	answers := make([]func() string, len(skillsAsked))
	for i, a := range skillsAsked {
		answers[i] = send(i+10, a.method, a.params)
	}
	for i, a := range skillsAsked {
		if got := answers[i](); !strings.Contains(got, a.want) {
			t.Errorf("%s sent before the backends were ready: %s\nwant an answer with %s", a.method, got, a.want)
		}
	}
}

// requestLine is a JSON-RPC request with a number id.
func requestLine(id int, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
}

// answerAside posts body from a goroutine of its own with post, and
// returns a function giving the JSON-RPC answer (an SSE stream's last
// event, or the JSON body).
func answerAside(post func() (io.ReadCloser, error)) func() string {
	var got atomic.Pointer[string]
	done := make(chan struct{})
	go func() {
		defer close(done)
		body, err := post()
		s := fmt.Sprintf("POST failed: %v", err)
		if err == nil {
			b, _ := io.ReadAll(body)
			body.Close()
			if s = string(b); !strings.HasPrefix(s, "{") {
				s = lastData(s)
			}
		}
		got.Store(&s)
	}()
	return func() string {
		<-done
		return *got.Load()
	}
}

// A client that asks for the skills (skills/list, skills/get,
// resources/directory/read) right after initialize, before a backend
// offering skills has started, is answered once the backends are ready,
// as every other request is, with that backend's skills: on stdio and
// over Streamable HTTP, stateful and stateless. A client that lists the
// skills once, as it connects, sees them all. Each request is the
// session's activity and the Observer's, as the SDK's requests are.
func TestSkillsWaitForReady(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		obs := &observed{}
		g := slowSkillsGateway(t, Options{Observer: obs})
		defer skillsObserved(t, obs)
		c := connectRaw(t, g)
		answered := map[string]wireMessage{} // the answers read so far, in whatever order they came
		askSkillsBeforeReady(t, g, func(id int, method, params string) func() string {
			c.send(requestLine(id, method, params))
			return func() string {
				for answered[strconv.Itoa(id)].ID == nil {
					var m wireMessage
					json.Unmarshal(waitSignal(t, c.lines, "the answers"), &m)
					answered[string(m.ID)] = m
				}
				m := answered[strconv.Itoa(id)]
				return fmt.Sprintf("%s %+v", m.Result, m.Error)
			}
		})
	})
	t.Run("HTTP stateful", func(t *testing.T) {
		t.Parallel()
		obs := &observed{}
		g := slowSkillsGateway(t, Options{Observer: obs})
		defer skillsObserved(t, obs)
		s := openHTTPSession(t, serveHTTP(t, g, Options{}))
		askSkillsBeforeReady(t, g, func(id int, method, params string) func() string {
			return answerAside(func() (io.ReadCloser, error) {
				resp, err := s.send(context.Background(), requestLine(id, method, params))
				if err != nil {
					return nil, err
				}
				return resp.Body, nil
			})
		})
	})
	t.Run("HTTP stateless", func(t *testing.T) {
		t.Parallel()
		obs := &observed{}
		opts := Options{Stateless: true, Observer: obs}
		g := slowSkillsGateway(t, opts)
		defer skillsObserved(t, obs)
		base := serveHTTP(t, g, opts)
		askSkillsBeforeReady(t, g, func(id int, method, params string) func() string {
			return answerAside(func() (io.ReadCloser, error) {
				return postStateless(context.Background(), t, base, requestLine(id, method, params), false).Body, nil
			})
		})
	})
}

// skillsObserved checks obs heard of each skillsAsked request once.
func skillsObserved(t *testing.T, obs *observed) {
	t.Helper()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, a := range skillsAsked {
		if n := countOf(obs.requests, a.method); n != 1 {
			t.Errorf("the Observer heard of %s %d times, want once (it heard %v)", a.method, n, obs.requests)
		}
	}
}
