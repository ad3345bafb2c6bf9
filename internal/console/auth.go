package console

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// cookieName is the sign-in cookie: an opaque random id, never a token.
const cookieName = "mcpbridge_console"

// signinTTL is how long a sign-in lasts.
const signinTTL = 8 * time.Hour

// maxSignins bounds the sign-ins kept; past it the oldest is dropped.
// maxViewerSignins bounds one identity's: past it, its own oldest is
// dropped, so that no viewer signing in again and again can sign the
// others out.
const (
	maxSignins       = 1000
	maxViewerSignins = 20
)

// signin is one viewer signed in: who, what they may do, and the token
// their tried calls carry (kept here, never sent to the browser).
type signin struct {
	viewer  gatewayauth.Viewer
	token   string
	acts    *actions // its forms' one-time tokens and its outcomes
	expires time.Time
}

// signins are the console's viewers signed in, by cookie id.
type signins struct {
	mu  sync.Mutex
	now func() time.Time
	by  map[string]*signin
}

func newSignins(now func() time.Time) *signins {
	return &signins{now: now, by: map[string]*signin{}}
}

// add signs v in and returns the cookie id.
func (s *signins) add(v gatewayauth.Viewer, token string) string {
	id := randomHex()
	si := &signin{viewer: v, token: token, acts: &actions{}, expires: s.now().Add(signinTTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.countLocked(v.Name) >= maxViewerSignins {
		s.dropOldestLocked(func(si *signin) bool { return si.viewer.Name == v.Name })
	} else if len(s.by) >= maxSignins {
		s.dropOldestLocked(func(*signin) bool { return true })
	}
	s.by[id] = si
	return id
}

func (s *signins) countLocked(name string) int {
	n := 0
	for _, si := range s.by {
		if si.viewer.Name == name {
			n++
		}
	}
	return n
}

// dropOldestLocked drops the sign-in that expires first among those of.
func (s *signins) dropOldestLocked(of func(*signin) bool) {
	var oldest string
	for id, si := range s.by {
		if of(si) && (oldest == "" || si.expires.Before(s.by[oldest].expires)) {
			oldest = id
		}
	}
	delete(s.by, oldest)
}

// get returns the sign-in of a cookie id, nil when unknown or expired.
func (s *signins) get(id string) *signin {
	s.mu.Lock()
	defer s.mu.Unlock()
	si := s.by[id]
	if si != nil && s.now().After(si.expires) {
		delete(s.by, id)
		return nil
	}
	return si
}

func (s *signins) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.by, id)
}

func randomHex() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// errNoGrant is why a signed-in identity granted nothing sees no page.
var errNoGrant = errors.New("this identity is not granted the console: add it to the gateway entry's console.allow (subjects, groups or scopes)")

// authorize checks a sign-in token: by the gateway's identities and the
// console grants, or, while the gateway configures none, against the
// console token.
func (c *Console) authorize(r *http.Request, token string) (gatewayauth.Viewer, error) {
	if token == "" {
		return gatewayauth.Viewer{}, errors.New("enter a token")
	}
	if c.opts.Access != nil {
		v, err := c.opts.Access.ConsoleViewer(r.Context(), token)
		if !errors.Is(err, gatewayauth.ErrNoIdentities) {
			if err == nil && !v.View {
				err = errNoGrant
			}
			return v, err
		}
	}
	if c.opts.Token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(c.opts.Token)) != 1 {
		return gatewayauth.Viewer{}, errors.New("the token is not the console's token (serve printed it when it started)")
	}
	return gatewayauth.Viewer{Name: "console", View: true, Try: true, Manage: true}, nil
}

// sameOrigin reports whether a state-changing request comes from the
// console's own pages: its Origin (or, without one, its Referer) is the
// console's host, over HTTPS, or over HTTP when the request came so (an
// http page posting to a TLS listener is not the console's). A page over
// HTTPS posting to a plain listener is the console's behind a proxy that
// ends TLS: only the host itself serves https://HOST. The gateway lets any
// loopback origin through; another port on the same machine is another
// origin here.
func sameOrigin(r *http.Request) bool {
	u, ok := sourceOf(r)
	if !ok {
		return r.Header.Get("Sec-Fetch-Site") == "" // a non-browser client
	}
	return u != nil && (u.Scheme == "https" || u.Scheme == "http" && r.TLS == nil) && strings.EqualFold(u.Host, r.Host)
}

// sourceOf is the page r was sent from: its Origin, or, without one, its
// Referer; ok is false when it names neither, and u nil when it names
// one that does not parse.
func sourceOf(r *http.Request) (u *url.URL, ok bool) {
	src := cmp.Or(r.Header.Get("Origin"), r.Header.Get("Referer"))
	if src == "" {
		return nil, false
	}
	u, _ = url.Parse(src)
	return u, true
}

// overHTTPS reports whether the browser reached the console over HTTPS:
// on a TLS listener, or through a proxy that ends TLS (the page it
// posted from is https). Its sign-in cookie is then Secure.
func overHTTPS(r *http.Request) bool {
	u, _ := sourceOf(r)
	return r.TLS != nil || u != nil && u.Scheme == "https"
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	p := page{Title: "Sign in"}
	if r.URL.Query().Get("signin") == "unknown" {
		p.Error = unknownSignin
	}
	c.render(w, r, http.StatusOK, "login", p)
}

// unknownSignin says why a browser that signed in is asked to sign in
// again: sign-ins live in the replica that made them, so a balancer that
// sends the console's requests round the replicas drops them.
const unknownSignin = "This gateway replica does not know your sign-in: it ended (expired, signed out, its grant revoked, or serve restarted), or it was made on another replica of the gateway, and each replica keeps its own sign-ins. Sign in again; behind a load balancer, send the console's requests (/console) to one replica."

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		c.refuseCrossSite(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	v, err := c.authorize(r, token)
	if err != nil {
		c.log.Info("console sign-in refused", "error", err, "remote", r.RemoteAddr)
		c.render(w, r, http.StatusUnauthorized, "login", page{Title: "Sign in", Error: "Sign-in refused: " + err.Error()})
		return
	}
	id := c.signins.add(v, token)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: gateway.ConsolePath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: overHTTPS(r), MaxAge: int(signinTTL.Seconds())})
	c.log.Info("console sign-in", "identity", v.Name, "tryIt", v.Try, "manage", v.Manage)
	http.Redirect(w, r, gateway.ConsolePath, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ *signin) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.signins.remove(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: gateway.ConsolePath, MaxAge: -1, HttpOnly: true})
	http.Redirect(w, r, gateway.ConsolePath+"/login", http.StatusSeeOther)
}

// viewer wraps a page that needs a signed-in viewer: without one, a GET is
// sent to the sign-in page and anything else refused; a POST must also
// come from the console's own origin and carry a form token of the
// sign-in's not sent yet (each page's forms get one, spent by the first).
func (c *Console) viewer(next func(http.ResponseWriter, *http.Request, *signin)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		si := c.current(r)
		if si == nil {
			c.signInFirst(w, r)
			return
		}
		if r.Method == http.MethodPost && !sameOrigin(r) {
			c.refuseCrossSite(w, r)
			return
		}
		if r.Method == http.MethodPost && !validCSRF(r, si) {
			c.refuseSpentForm(w, r, si)
			return
		}
		next(w, r, si)
	}
}

// signInFirst answers r, which no sign-in of this replica's carries: a
// GET is sent to the sign-in page, anything else refused, each saying
// why when r carries a sign-in this replica does not know.
func (c *Console) signInFirst(w http.ResponseWriter, r *http.Request) {
	_, err := r.Cookie(cookieName)
	signedIn := err == nil
	switch {
	case r.Method == http.MethodGet && signedIn:
		http.Redirect(w, r, gateway.ConsolePath+"/login?signin=unknown", http.StatusSeeOther)
	case r.Method == http.MethodGet:
		http.Redirect(w, r, gateway.ConsolePath+"/login", http.StatusSeeOther)
	case signedIn:
		http.Error(w, "Unauthorized: "+unknownSignin, http.StatusUnauthorized)
	default:
		http.Error(w, "Unauthorized: sign in to the console first", http.StatusUnauthorized)
	}
}

// current is r's sign-in with its grants checked again now, so a reload
// that revokes a grant (or a token) takes effect at the next request; nil
// when r is not signed in or no longer may be.
func (c *Console) current(r *http.Request) *signin {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	si := c.signins.get(ck.Value)
	if si == nil {
		return nil
	}
	v, err := c.authorize(r, si.token)
	if err != nil {
		c.log.Info("console sign-in ended: its grant no longer holds", "identity", si.viewer.Name, "error", err)
		c.signins.remove(ck.Value)
		return nil
	}
	now := *si
	now.viewer = v
	return &now
}

// validCSRF spends r's form token: true once for a token si's pages were
// given, so the same form sent again (a reload of its answer, a replay)
// is refused.
func validCSRF(r *http.Request, si *signin) bool {
	r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
	return si.acts.use(r.PostFormValue("csrf"))
}

// refuseSpentForm answers a form whose token is unknown: sent already
// (its action is not done again), from a page too old, or forged.
func (c *Console) refuseSpentForm(w http.ResponseWriter, r *http.Request, si *signin) {
	c.log.Warn("console request refused: its form was sent already, or its token is unknown", "path", r.URL.Path, "identity", si.viewer.Name, "remote", r.RemoteAddr)
	http.Error(w, "Forbidden: this form was sent already (it is not done again), or its page is too old: open the page again to send it anew", http.StatusForbidden)
}

func (c *Console) refuseCrossSite(w http.ResponseWriter, r *http.Request) {
	c.log.Warn("console request refused: cross-site", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
	http.Error(w, "Forbidden: this form was not sent from the console's own page (cross-site request refused)", http.StatusForbidden)
}
