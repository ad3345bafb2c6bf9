package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// consoleClient is a signed-in viewer's HTTP client that does not follow
// redirects, so a test sees each answer.
type consoleClient struct {
	t    *testing.T
	c    *http.Client
	base string
}

func signedIn(t *testing.T, base, token string) *consoleClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	cc := &consoleClient{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if resp := cc.post("/console/login", url.Values{"token": {token}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in: %d, want 303", resp.StatusCode)
	}
	return cc
}

func (cc *consoleClient) post(path string, form url.Values) *http.Response {
	cc.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, cc.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", cc.base)
	resp, err := cc.c.Do(req)
	if err != nil {
		cc.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// get returns the status and body of path.
func (cc *consoleClient) get(path string) (int, string) {
	cc.t.Helper()
	resp, err := cc.c.Get(cc.base + path)
	if err != nil {
		cc.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// form is the CSRF token of path's forms.
func (cc *consoleClient) form(path string) string {
	cc.t.Helper()
	code, body := cc.get(path)
	m := csrfField.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		cc.t.Fatalf("%s: %d, no form: %s", path, code, body)
	}
	return m[1]
}
