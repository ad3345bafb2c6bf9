package gateway

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The matrix of issue 32: one logical tools/call is one admission (one
// rate token: one Enter), one audit line (a refused Enter, or the one end
// an admitted call is told of) and one call slot, whichever entry point
// read it, whatever the Gate decided, and however many rounds of
// questions it took. The task column is TestAdmissionTaskGatedBeforeItExists,
// over every path to tasks with the same Gate.

// answerFunc answers a question the gateway puts to its client.
type answerFunc = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)

// matrixEntry is one way a client reaches the gateway, for calls that
// ask their client nothing (plain) and for calls asked two questions.
type matrixEntry struct {
	name string
	// open serves g (made with opts) and connects a client that answers
	// each question with answer.
	open func(t *testing.T, g *Gateway, opts Options, answer answerFunc) *mcp.ClientSession
	// viaSDK says whether tools/call goes through the SDK's session
	// (its receiving middleware), for plain calls and for calls asked
	// questions; false: the connection-level take beneath it.
	plainViaSDK, askedViaSDK bool
	opts                     Options
}

var matrixEntries = []matrixEntry{
	{name: "SDK path (in memory, 2026-07-28)", plainViaSDK: true, askedViaSDK: true,
		open: func(t *testing.T, g *Gateway, _ Options, answer answerFunc) *mcp.ClientSession {
			cs, _ := connectClient(t, g, answeringClient(answer), nil)
			return cs
		}},
	{name: "stdio (2025-11-25)",
		open: func(t *testing.T, g *Gateway, _ Options, answer answerFunc) *mcp.ClientSession {
			return answeringStdio(t, g, answer)
		}},
	{name: "HTTP stateful (2025-11-25)",
		open: func(t *testing.T, g *Gateway, opts Options, answer answerFunc) *mcp.ClientSession {
			return answeringHTTP(t, serveHTTP(t, g, opts), answer, "2025-11-25")
		}},
	{name: "HTTP stateless (2026-07-28)", opts: Options{Stateless: true}, askedViaSDK: true,
		open: func(t *testing.T, g *Gateway, opts Options, answer answerFunc) *mcp.ClientSession {
			return answeringHTTP(t, serveHTTP(t, g, opts), answer, "")
		}},
}

// answeringStdio connects an answeringClient at 2025-11-25 to g served by
// ServeStdio on OS pipes, until the end of the test.
func answeringStdio(t *testing.T, g *Gateway, answer answerFunc) *mcp.ClientSession {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.ServeStdio(ctx, inR, outW) }()
	cs, err := answeringClient(answer).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	})
	return cs
}

// answeringClient is a go-sdk client that offers elicitation, answered
// with answer, mid-call or through input-required rounds, and nothing
// else (nothing at all when answer is nil).
func answeringClient(answer answerFunc) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, ElicitationHandler: answer})
}

// answeringHTTP connects an answeringClient to base+"/mcp" at version (""
// for the client's newest).
func answeringHTTP(t *testing.T, base string, answer answerFunc, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{}}
	cs, err := answeringClient(answer).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// matrixRegistry holds work, deny and limited, each returning "done"
// (plain) or asking two questions (asked).
func matrixRegistry(t *testing.T, asked bool) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	for _, name := range []string{"work", "deny", "limited"} {
		tl := goTool(name, textBody("done"))
		if asked {
			tl = twiceTool(name, false)
		}
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func TestOneAdmissionPerLogicalCall(t *testing.T) {
	for _, e := range matrixEntries {
		for _, asked := range []bool{false, true} {
			kind := "plain"
			if asked {
				kind = "two questions"
			}
			t.Run(e.name+", "+kind, func(t *testing.T) {
				gate := newCountingGate()
				opts := e.opts
				opts.Gate = gate
				g := newGateway(t, matrixRegistry(t, asked), opts)
				viaSDK := sdkCalls(g)
				var (
					mu        sync.Mutex
					questions int
					slots     []int // the calls in flight at each question
				)
				var answer answerFunc
				if asked {
					answer = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						g.mu.Lock()
						held := g.inFlight
						g.mu.Unlock()
						mu.Lock()
						defer mu.Unlock()
						questions++
						slots = append(slots, held)
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "yes"}}, nil
					}
				}
				cs := e.open(t, g, opts, answer)

				// Allowed: admitted once, ended once with its outcome, one
				// slot throughout, however many questions it was asked.
				res := matrixCall(t, cs, "work")
				if res == nil || res.IsError {
					t.Fatalf("work: %+v; want its result", res)
				}
				gate.expect(t, "work", counts{Entered: 1, Ended: okOutcome})
				if asked {
					mu.Lock()
					if questions != 2 || slots[0] != 1 || slots[1] != 1 {
						t.Errorf("asked %d questions with %v calls in flight at each; want 2, one call each time", questions, slots)
					}
					mu.Unlock()
				}

				// Denied: one Enter (its audit line), no end, nothing run.
				if _, err := matrixCallErr(cs, "deny"); !hasCode(err, codeDenied) {
					t.Errorf("deny: %v; want the Gate's error %d", err, codeDenied)
				}
				gate.expect(t, "deny", counts{Entered: 1})

				// Rate-limited: the first call spends the one token, the
				// second is refused at once; two Enters, one end.
				if res := matrixCall(t, cs, "limited"); res == nil || res.IsError {
					t.Fatalf("limited, first: %+v; want its result", res)
				}
				if _, err := matrixCallErr(cs, "limited"); !hasCode(err, codeLimited) {
					t.Errorf("limited, second: %v; want the Gate's error %d", err, codeLimited)
				}
				gate.expect(t, "limited", counts{Entered: 2, Ended: okOutcome})
				if asked && questions != 4 {
					t.Errorf("%d questions asked in all; want 4 (two per admitted call, none for refused ones)", questions)
				}

				waitFor(t, "every slot given back", func() bool {
					g.mu.Lock()
					defer g.mu.Unlock()
					return g.inFlight == 0 && g.slotsTaken() == 0
				})
				wantSDK := e.plainViaSDK
				if asked {
					wantSDK = e.askedViaSDK
				}
				if got := viaSDK.Load() > 0; got != wantSDK {
					t.Errorf("tools/call through the SDK's session: %v, want %v", got, wantSDK)
				}
			})
		}
	}
}

// matrixCall calls name with no arguments and fails t on an error.
func matrixCall(t *testing.T, cs *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	res, err := matrixCallErr(cs, name)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	if text := strings.Join(texts(res), ""); res.IsError {
		t.Logf("%s answered an error: %s", name, text)
	}
	return res
}

func matrixCallErr(cs *mcp.ClientSession, name string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
}

// hasCode reports whether err wraps a JSON-RPC error of code.
func hasCode(err error, code int64) bool {
	wire, ok := errors.AsType[*jsonrpc.Error](err)
	return ok && wire.Code == code
}
