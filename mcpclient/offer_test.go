package mcpclient

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// offerServer is an in-memory go-sdk server with resources, a template,
// prompts, completion and subscriptions, counting what it is asked.
type offerServer struct {
	srv                   *mcp.Server
	subscribes, unsubs    atomic.Int32
	refuseSubscribe       atomic.Bool   // resources/subscribe answers an error
	failLists             atomic.Bool   // resources/list and prompts/list answer an error
	loopCursor            atomic.Bool   // resources/list repeats its cursor forever
	oddLists              atomic.Bool   // templates and prompts lists with items to ignore
	slowRead              chan struct{} // when set, reads wait for it
	lastCompletionRefName atomic.Value
}

func newOfferServer() *offerServer {
	o := &offerServer{}
	o.srv = mcp.NewServer(&mcp.Implementation{Name: "offers", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			o.lastCompletionRefName.Store(req.Params.Ref.Type + " " + req.Params.Ref.Name + req.Params.Ref.URI)
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-done"}, Total: 1}}, nil
		},
		SubscribeHandler: func(context.Context, *mcp.SubscribeRequest) error {
			o.subscribes.Add(1)
			if o.refuseSubscribe.Load() {
				return errors.New("subscriptions are closed")
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { o.unsubs.Add(1); return nil },
	})
	o.srv.AddResource(&mcp.Resource{URI: "mem://text", Name: "text", MIMEType: "text/plain"}, textReader("hello"))
	o.srv.AddResource(&mcp.Resource{URI: "mem://blob", Name: "blob"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte("0123456789")}}}, nil
	})
	o.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://item/{id}", Name: "item"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item " + strings.TrimPrefix(req.Params.URI, "mem://item/")}}}, nil
	})
	o.srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Say hello", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello " + req.Params.Arguments["who"]}},
				{Role: "assistant", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://text", Text: "embedded"}}},
			}}, nil
		})
	o.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch {
			case o.failLists.Load() && (method == "resources/list" || method == "prompts/list"):
				return nil, errors.New("lists are down")
			case o.loopCursor.Load() && method == "resources/list":
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, NextCursor: "again"}, nil
			case o.oddLists.Load() && method == "resources/templates/list":
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{{Name: "no template"}, {URITemplate: "mem://ok/{x}"}}}, nil
			case o.oddLists.Load() && method == "prompts/list":
				return &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{{Description: "no name"}, {Name: "twice"}, {Name: "twice"}}}, nil
			case o.slowRead != nil && method == "resources/read":
				select {
				case <-o.slowRead:
				case <-ctx.Done():
				}
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	return o
}

func textReader(text string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: text}}}, nil
	}
}

func startOffers(t *testing.T, cfg Config) (*harness, *offerServer, *memServer) {
	t.Helper()
	o := newOfferServer()
	mem := newMemServer(t, o.srv)
	h := mustStart(t, cfg, Options{NewTransport: mem.transport})
	return h, o, mem
}

func uris(reg *tool.Registry) []string {
	var out []string
	for _, r := range reg.Resources() {
		out = append(out, r.Server+" "+r.URI)
	}
	return out
}

func TestOfferDiscovered(t *testing.T) {
	h, o, _ := startOffers(t, stdioConfig("mem"))
	ctx := context.Background()
	if got, want := uris(h.reg), []string{"mem mem://blob", "mem mem://text"}; !slices.Equal(got, want) {
		t.Errorf("resources = %v, want %v", got, want)
	}
	if tpl := h.reg.ResourceTemplates(); len(tpl) != 1 || tpl[0].URITemplate != "mem://item/{id}" || !strings.Contains(string(tpl[0].Wire), `"name":"item"`) {
		t.Errorf("templates = %+v", tpl)
	}
	ps := h.reg.Prompts()
	if len(ps) != 1 || ps[0].Name != "mcp__mem__greet" || ps[0].Origin.Name != "greet" || len(ps[0].Arguments) != 1 || !ps[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v", ps)
	}
	for _, c := range []struct{ uri, want string }{
		{"mem://text", "hello"},
		{"mem://blob", "[binary resource mem://blob: image/png, 10 B]"},
		{"mem://item/7", "item 7"},
	} {
		res, err := h.reg.ReadResource(ctx, "mem", c.uri)
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != c.want {
			t.Errorf("read %s = %+v, %v; want %q", c.uri, res, err, c.want)
		}
	}
	if res, _ := h.reg.ReadResource(ctx, "mem", "mem://blob"); !strings.Contains(string(res.Wire), base64.StdEncoding.EncodeToString([]byte("0123456789"))) {
		t.Errorf("blob wire = %s, want the server's base64", res.Wire)
	}
	if _, err := h.reg.ReadResource(ctx, "mem", "mem://none"); err == nil || !strings.Contains(err.Error(), `server "mem": resources/read:`) {
		t.Errorf("read of an unknown URI: err = %v", err)
	}
	pr, err := h.reg.GetPrompt(ctx, "mcp__mem__greet", map[string]string{"who": "Ada"})
	if err != nil || len(pr.Messages) != 2 || pr.Messages[0].Content[0].Text != "Hello Ada" || pr.Messages[1].Role != "assistant" || pr.Messages[1].Content[0].Text != "embedded" {
		t.Errorf("prompt = %+v, %v", pr, err)
	}
	for _, ref := range []tool.CompletionRef{{Type: tool.RefPrompt, Name: "mcp__mem__greet"}, {Type: tool.RefResource, URI: "mem://item/{id}"}} {
		c, err := h.reg.Complete(ctx, tool.CompleteRequest{Ref: ref, Argument: tool.CompletionArgument{Name: "who", Value: "A"}})
		if err != nil || !slices.Equal(c.Values, []string{"A-done"}) || c.Total != 1 {
			t.Errorf("complete %+v = %+v, %v", ref, c, err)
		}
	}
	if got := o.lastCompletionRefName.Load(); got != "ref/resource mem://item/{id}" {
		t.Errorf("server saw ref %v", got)
	}
	if s := h.reg.Servers(); len(s) != 1 || !s[0].Resources || !s[0].Prompts || !s[0].Complete || !s[0].Subscribe || s[0].HideResources {
		t.Errorf("servers = %+v", s)
	}
}

func TestOfferHiddenResources(t *testing.T) {
	cfg := stdioConfig("mem")
	cfg.HideResources = true
	h, _, _ := startOffers(t, cfg)
	if s := h.reg.Servers(); len(s) != 1 || !s[0].HideResources || len(h.reg.Resources()) != 2 {
		t.Errorf("servers = %+v, resources = %v", s, uris(h.reg))
	}
}

func TestOfferListChanged(t *testing.T) {
	h, o, _ := startOffers(t, stdioConfig("mem"))
	o.srv.AddResource(&mcp.Resource{URI: "mem://new", Name: "new"}, textReader("new"))
	waitFor(t, "the new resource", func() bool { return slices.Contains(uris(h.reg), "mem mem://new") })
	o.srv.RemovePrompts("greet")
	waitFor(t, "the prompt to go", func() bool { return len(h.reg.Prompts()) == 0 })
	if !h.log.HasRecord(slog.LevelInfo, msgResync, "lists", "resources") || !h.log.HasRecord(slog.LevelInfo, msgResync, "lists", "prompts") {
		t.Errorf("want re-sync records naming the lists; log:\n%s", h.log.Text())
	}
	if h.log.HasRecord(slog.LevelInfo, msgResync, "lists", "tools") {
		t.Errorf("a resource or prompt change re-listed the tools; log:\n%s", h.log.Text())
	}
}

// A failed or endless list keeps the last good one and never fails the
// server: its tools stand on their own.
func TestOfferListFailureKeepsLastGood(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(o *offerServer)
		want string
	}{
		{"error", func(o *offerServer) { o.failLists.Store(true) }, "lists are down"},
		{"repeated cursor", func(o *offerServer) { o.loopCursor.Store(true) }, `resources/list returned the cursor "again" twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, o, _ := startOffers(t, stdioConfig("mem"))
			c.set(o)
			o.srv.AddResource(&mcp.Resource{URI: "mem://new", Name: "new"}, textReader("new"))
			waitFor(t, "the failed fetch's log", func() bool {
				return strings.Contains(h.log.Text(), "list fetch failed; keeping the last good list") && strings.Contains(h.log.Text(), c.want)
			})
			if got, want := uris(h.reg), []string{"mem mem://blob", "mem mem://text"}; !slices.Equal(got, want) {
				t.Errorf("resources = %v, want the last good %v", got, want)
			}
			if st := h.srv.Status(); st.State != "ready" {
				t.Errorf("state = %s, want ready", st.State)
			}
		})
	}
}

// Subscriptions on either protocol: resources/subscribe (2025-11-25, where
// the server's handlers count them) or a subscriptions/listen stream
// (2026-07-28); updates arrive, and survive a reconnect.
func TestOfferSubscribe(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cfg := stdioConfig("mem")
			cfg.ProtocolVersion = version
			h, o, mem := startOffers(t, cfg)
			legacy := version < "2026-07-28"
			ctx := context.Background()
			updates := make(chan string, 16)
			cancel, err := h.reg.SubscribeResource(ctx, "mem", "mem://text", func(uri string) { updates <- uri })
			if err != nil {
				t.Fatal(err)
			}
			if legacy && o.subscribes.Load() != 1 {
				t.Errorf("server saw %d subscribes, want 1", o.subscribes.Load())
			}
			notifyUntilSeen(t, o.srv, updates, "mem://text")
			mem.crash(1) // the subscription is renewed on the next connection
			waitFor(t, "the reconnect", func() bool { return mem.connections() == 2 && h.srv.Status().State == "ready" })
			notifyUntilSeen(t, o.srv, updates, "mem://text")
			cancel()
			if legacy && (o.subscribes.Load() != 2 || o.unsubs.Load() != 1) {
				t.Errorf("server saw %d subscribes and %d unsubscribes, want 2 and 1", o.subscribes.Load(), o.unsubs.Load())
			}
		})
	}
}

// A subscription the server refused is not asked for again on the next
// connection: the subscriber was told it failed and holds nothing to
// cancel (it was renewed at every reconnect, for good).
func TestOfferRefusedSubscriptionForgotten(t *testing.T) {
	cfg := stdioConfig("mem")
	cfg.ProtocolVersion = "2025-11-25"
	h, o, mem := startOffers(t, cfg)
	o.refuseSubscribe.Store(true)
	if _, err := h.reg.SubscribeResource(context.Background(), "mem", "mem://text", func(string) {}); err == nil || !strings.Contains(err.Error(), "subscriptions are closed") {
		t.Fatalf("a refused subscribe: err = %v", err)
	}
	mem.crash(1)
	waitFor(t, "the reconnect", func() bool { return mem.connections() == 2 && h.srv.Status().State == "ready" })
	if n := o.subscribes.Load(); n != 1 {
		t.Errorf("the server was asked %d times for the refused subscription, want once", n)
	}
	if h.log.HasRecord(slog.LevelWarn, "resource subscription not renewed") {
		t.Errorf("a refused subscription was renewed:\n%s", h.log.Text())
	}
}

// notifyUntilSeen sends updates of uri until one arrives (a listen stream
// may still be opening).
func notifyUntilSeen(t *testing.T, srv *mcp.Server, ch <-chan string, uri string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("update %q", uri), func() bool {
		_ = srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		select {
		case got := <-ch:
			return got == uri
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
}

// Items a server lists without what identifies them (a template without a
// URI template, a prompt without a name, a prompt listed twice) are left
// out with a warning; the rest are kept.
func TestOfferOddListItems(t *testing.T) {
	o := newOfferServer()
	o.oddLists.Store(true)
	h := mustStart(t, stdioConfig("mem"), Options{NewTransport: newMemServer(t, o.srv).transport})
	if tpl := h.reg.ResourceTemplates(); len(tpl) != 1 || tpl[0].URITemplate != "mem://ok/{x}" {
		t.Errorf("templates = %+v", tpl)
	}
	if ps := h.reg.Prompts(); len(ps) != 1 || ps[0].Name != "mcp__mem__twice" {
		t.Errorf("prompts = %+v", ps)
	}
	for _, msg := range []string{"resource template ignored: not an object with a uriTemplate", "prompt ignored: not an object with a name", "prompt ignored: its public name is taken by another of the server's prompts"} {
		if !h.log.HasRecord(slog.LevelWarn, msg) {
			t.Errorf("no warning %q:\n%s", msg, h.log.Text())
		}
	}
}

// A read ends with toolCallTimeoutMs, or with its caller.
func TestOfferReadEnds(t *testing.T) {
	o := newOfferServer()
	o.slowRead = make(chan struct{})
	defer close(o.slowRead)
	cfg := stdioConfig("mem")
	cfg.ToolCallTimeout = 100 * time.Millisecond
	h := mustStart(t, cfg, Options{NewTransport: newMemServer(t, o.srv).transport})
	if _, err := h.reg.ReadResource(context.Background(), "mem", "mem://text"); err == nil || !strings.Contains(err.Error(), `server "mem" did not answer resources/read within toolCallTimeoutMs (100ms)`) {
		t.Errorf("timed out read: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := h.reg.ReadResource(ctx, "mem", "mem://text"); err == nil || !strings.Contains(err.Error(), "resources/read cancelled") {
		t.Errorf("cancelled read: %v", err)
	}
}

// A server without resources or prompts publishes none, and the registry
// knows it offers nothing but tools.
func TestOfferToolsOnly(t *testing.T) {
	h, _, _ := fixtureHarness(t, mcppeer.FixtureOptions{})
	if len(h.reg.Servers()) != 0 || len(h.reg.Resources()) != 0 || len(h.reg.Prompts()) != 0 {
		t.Errorf("servers = %+v", h.reg.Servers())
	}
}

// Subscribing on 2026-07-28 writes the subscriptions/listen request on
// the caller's goroutine, not one nobody waits for: here the request is
// held in its write until the test lets it go, and SubscribeResource must
// not return before. Close then ends the stream with the session.
func TestOfferListenRequestIsTheCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOfferServer()
		mem := newMemServer(t, o.srv)
		held := &heldListen{release: make(chan struct{})}
		newTransport := func() (mcp.Transport, error) {
			tr, err := mem.transport()
			return &heldListenTransport{Transport: tr, held: held}, err
		}
		cfg := stdioConfig("mem")
		cfg.ProtocolVersion = "2026-07-28"
		reg := newRegistry()
		s, err := Start(cfg, Options{Registry: reg, Logger: mcptest.NewLog().Logger(), NewTransport: newTransport})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		subscribed := make(chan error, 1)
		go func() {
			_, err := reg.SubscribeResource(context.Background(), "mem", "mem://text", func(string) {})
			subscribed <- err
		}()
		synctest.Wait() // everything is blocked: the request in its write
		if !held.seen.Load() {
			t.Error("no subscriptions/listen request for mem://text was written")
		}
		var subErr error
		returned := false
		select {
		case subErr = <-subscribed:
			returned = true
			t.Error("SubscribeResource returned while its request was still being written on another goroutine")
		default:
		}
		close(held.release)
		if !returned {
			subErr = <-subscribed
		}
		if subErr != nil {
			t.Error(subErr)
		}
		s.Close()
		for i := 1; i <= mem.connections(); i++ {
			mem.crash(i) // the server's side ends in the bubble too
		}
		synctest.Wait()
	})
}

// heldListen holds the write of a resource's subscriptions/listen
// request until release is closed.
type heldListen struct {
	release chan struct{}
	seen    atomic.Bool
}

type heldListenTransport struct {
	mcp.Transport
	held *heldListen
}

func (t *heldListenTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	return &heldListenConn{Connection: c, held: t.held}, err
}

type heldListenConn struct {
	mcp.Connection
	held *heldListen
}

func (c *heldListenConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	// The SDK's own listen stream (list changes) opens at connect; the
	// one a subscription opens names its resource.
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "subscriptions/listen" && strings.Contains(string(req.Params), "mem://text") {
		c.held.seen.Store(true)
		<-c.held.release
	}
	return c.Connection.Write(ctx, msg)
}

// A server's other lists are bounded in number as its tools are
// (MaxTools): a listing of small resources or prompts past it fails, and
// the last good list stays.
func TestOfferListsBoundedInNumber(t *testing.T) {
	o := newOfferServer()
	h := mustStart(t, stdioConfig("mem"), Options{MaxTools: 3, NewTransport: newMemServer(t, o.srv).transport})
	for _, uri := range []string{"mem://a", "mem://b"} {
		o.srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, textReader("x"))
	}
	for _, name := range []string{"p1", "p2", "p3"} {
		o.srv.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	for _, noun := range []string{"resources", "prompts"} {
		want := "mcp-client(mem): the server lists more than 3 " + noun + ", the bridge's limit per server (MaxTools)"
		waitFor(t, "the failed "+noun+" fetch", func() bool { return strings.Contains(h.log.Text(), want) })
	}
	if got, want := uris(h.reg), []string{"mem mem://blob", "mem mem://text"}; !slices.Equal(got, want) {
		t.Errorf("resources = %v, want the last good %v", got, want)
	}
	if got := len(h.reg.Prompts()); got != 1 {
		t.Errorf("%d prompts registered, want the last good 1", got)
	}
}
