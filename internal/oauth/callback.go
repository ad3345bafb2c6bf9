package oauth

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Callback is the loopback redirect of a login (RFC 8252 §7.3): it shows
// the authorization URL, opens a browser, and receives the code. Create it
// with ListenCallback; Close it when the login is over.
type Callback struct {
	ln     net.Listener
	srv    *http.Server
	out    io.Writer
	open   func(url string) error
	server string

	serve sync.Once
	done  chan struct{}

	// login is the login in progress: a request without its state is not
	// its redirect, but anything else that reached the loopback port (a
	// web page's request), and decides nothing.
	login atomic.Pointer[pendingLogin]
}

// pendingLogin is a login waiting for its redirect. Each has its own
// channel, so that an earlier login's redirect, however late its result,
// can never answer a later login.
type pendingLogin struct {
	state  string
	result chan callbackResult // one slot: one redirect answers a state
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// ListenCallback listens on 127.0.0.1:port (0: any free port). Fetch
// prints each authorization URL on out for server (a name for the
// message) and calls open with it (nil: never; its error is ignored: the
// printed URL is the way without a browser).
func ListenCallback(port int, server string, out io.Writer, open func(url string) error) (*Callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("login: listening for the redirect on 127.0.0.1:%d: %w", port, err)
	}
	c := &Callback{ln: ln, out: out, open: open, server: server, done: make(chan struct{})}
	c.srv = &http.Server{Handler: http.HandlerFunc(c.redirected)}
	return c, nil
}

// RedirectURL is the redirect URI to register and send.
func (c *Callback) RedirectURL() string {
	return "http://" + c.ln.Addr().String() + "/callback"
}

// Fetch is an auth.AuthorizationCodeFetcher: it waits for the browser's
// redirect or ctx's end.
func (c *Callback) Fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	// The SDK lets any scheme through on a loopback host: opened, another
	// scheme would start whatever program handles it.
	if problem := safeEndpoint(args.URL, true); problem != "" {
		return nil, fmt.Errorf("login: the authorization URL %q %s, so it is not opened: the authorization server's metadata must name an https authorization_endpoint", args.URL, problem)
	}
	// The state is what tells the login's redirect from anything else
	// that reaches the port: without one, any page could answer it.
	state := sentState(args.URL)
	if state == "" {
		return nil, fmt.Errorf("login: the authorization URL carries no state, so the redirect could not be told from any other request to the callback: %s", args.URL)
	}
	login := &pendingLogin{state: state, result: make(chan callbackResult, 1)}
	c.login.Store(login)
	c.serve.Do(func() {
		go func() {
			defer close(c.done)
			c.srv.Serve(c.ln)
		}()
	})
	// The URL is the authorization server's: its control and hiding
	// characters would reach the terminal, or show another URL, and a
	// megabyte of it would fill the screen (the browser gets it whole).
	escaped := termsafe.Line(args.URL)
	fmt.Fprintf(c.out, "To log in to %s, open this URL in a browser:\n\n  %s\n\n", c.server, textcut.Peer(escaped))
	if len(escaped) > textcut.PeerText {
		// Said, rather than leave a person pasting its start to wonder.
		fmt.Fprintf(c.out, "(The URL is %d bytes long and is shown cut: only the browser mcpbridge opens can follow it.)\n\n", len(args.URL))
	}
	if c.open != nil {
		c.open(args.URL)
	}
	select {
	case r := <-login.result:
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("login: waiting for the browser: %w", ctx.Err())
	}
}

// redirected answers the browser and hands the result to Fetch. A request
// to another path (a favicon) is not a result.
func (c *Callback) redirected(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	// A state answers once: the same redirect again (the "Logged in" tab
	// reloaded) is not the result of a later login.
	login := c.login.Load()
	if login == nil || q.Get("state") != login.state || !c.login.CompareAndSwap(login, nil) {
		http.Error(w, foreignRedirect, http.StatusBadRequest)
		return
	}
	res, err := codeFrom(q)
	msg := "Logged in. You can close this window."
	if err != nil {
		msg = "Login failed: " + err.Error()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><title>mcpbridge</title><p>%s</p>\n", html.EscapeString(msg))
	login.result <- callbackResult{res, err} // the one send: the state was taken above
}

// foreignRedirect is the callback's answer to a redirect of another
// state than the login's: a person who finished an old tab learns that
// it did nothing, and what does.
const foreignRedirect = "This redirect carries a state that is not the login's in progress " +
	"(it comes from an earlier or a second login tab, or a forged redirect), so nothing was authorized. " +
	"Finish the login in the tab mcpbridge opened for it, or run mcpbridge login again and finish it in the tab it opens."

// Close stops listening and waits for the server to stop.
func (c *Callback) Close() error {
	served := true
	c.serve.Do(func() { served = false })
	if !served {
		return c.ln.Close()
	}
	err := c.srv.Close()
	<-c.done
	return err
}
