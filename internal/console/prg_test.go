package console_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// auditCount is how many lines of the fixture's audit trail hold every
// one of parts.
func (f *fixture) auditCount(t *testing.T, parts ...string) int {
	t.Helper()
	trail, err := os.ReadFile(f.audit)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(trail)) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			n++
		}
	}
	return n
}

// Reloading the page a console action answered with does not do the
// action again: the tried tool is not called again, the entry not
// restarted again; each action is recorded once. Before, the action's
// answer was its POST's, which the browser sent again on reload.
func TestReloadAfterActionDoesNotRepeatIt(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	sum := getSum(t, f)
	if got := tryIt(t, ctx, f.URL, sum, map[string]string{"a": "2", "b": "40"}); !strings.Contains(got, "The sum of 2 and 40 is 42.") {
		t.Fatalf("get-sum 2 + 40: the page says %q, want 42", got)
	}
	do(t, ctx, chromedp.Reload())
	if n := f.auditCount(t, `"identity":"alice"`, `"name":"`+sum+`"`); n != 1 {
		t.Errorf("after a try-it of %s and a reload, the audit trail has %d calls of it by alice, want 1", sum, n)
	}

	do(t, ctx, chromedp.Navigate(f.URL+"/console/servers/everything"), chromedp.WaitVisible(chromedp.ID("restart")))
	click(t, ctx, "restart")
	if got := text(t, ctx, "main"); !strings.Contains(got, "everything: restarted") {
		t.Errorf("after alice's restart the page says %q, want it restarted", got)
	}
	do(t, ctx, chromedp.Reload())
	if got := f.takeManaged(); !slices.Equal(got, []string{"everything restart"}) {
		t.Errorf("a restart and a reload of its page asked for %q, want one everything restart", got)
	}
	if n := f.auditCount(t, `"method":"console/restart"`); n != 1 {
		t.Errorf("a restart and a reload of its page left %d console/restart lines in the audit trail, want 1", n)
	}
}

// A console action answers its POST with 303 to a page that shows the
// outcome once, and its form sent again (its token replayed) is refused
// and does nothing.
func TestConsoleActionsRedirect(t *testing.T) {
	f := newFixture(t)
	cc := signedIn(t, f.URL, aliceToken)
	sum := getSum(t, f)
	page := "/console/tools/" + sum
	try := url.Values{"csrf": {cc.form(page)}, "arg.a": {"2"}, "arg.b": {"40"}}
	resp := cc.post(page, try)
	to := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, page+"?outcome=") {
		t.Fatalf("a try-it of %s: %d to %q, want 303 to its page with the outcome", sum, resp.StatusCode, to)
	}
	// The sum's own sentence, not "42": the page's random form token may hold "42".
	const sumSaid = "The sum of 2 and 40 is 42."
	if code, body := cc.get(to); code != http.StatusOK || !strings.Contains(body, sumSaid) {
		t.Errorf("the try-it's outcome page: %d, want 200 saying %q: %s", code, sumSaid, body)
	}
	if _, body := cc.get(to); strings.Contains(body, sumSaid) || strings.Contains(body, `id="result"`) {
		t.Errorf("the try-it's outcome page shows the result a second time: %s", body)
	}
	if resp := cc.post(page, try); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the try-it's form sent again: %d, want 403", resp.StatusCode)
	}
	if n := f.auditCount(t, `"name":"`+sum+`"`); n != 1 {
		t.Errorf("a try-it sent twice called %s %d times, want once", sum, n)
	}

	server := "/console/servers/everything"
	restart := url.Values{"csrf": {cc.form(server)}}
	resp = cc.post(server+"/restart", restart)
	to = resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, server+"?outcome=") {
		t.Fatalf("a restart: %d to %q, want 303 to the server's page with the outcome", resp.StatusCode, to)
	}
	if code, body := cc.get(to); code != http.StatusOK || !strings.Contains(body, "everything: restarted") {
		t.Errorf("the restart's outcome page: %d, want 200 saying it restarted: %s", code, body)
	}
	if resp := cc.post(server+"/restart", restart); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the restart's form sent again: %d, want 403", resp.StatusCode)
	}
	if got := f.takeManaged(); !slices.Equal(got, []string{"everything restart"}) {
		t.Errorf("a restart sent twice asked for %q, want one everything restart", got)
	}
}

// While the audit trail cannot take a line (and fails closed), a restart
// or reload from the console is not done: it would leave no line, while
// every call is refused for want of one. The page says why, and the same
// action goes through once the trail can be written again.
func TestActionNotDoneWithoutItsAuditLine(t *testing.T) {
	f := newFixture(t)
	cc := signedIn(t, f.URL, aliceToken)
	server := "/console/servers/everything"
	f.apply(t, fmt.Sprintf(gatewayConfig, "/dev/full"))
	req, _ := http.NewRequest(http.MethodPost, f.URL+server+"/restart", strings.NewReader(url.Values{"csrf": {cc.form(server)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.URL)
	resp, err := cc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := f.takeManaged(); len(got) != 0 {
		t.Errorf("a restart with the audit trail unwritable asked for %q, want nothing done", got)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "cannot write its audit trail") {
		t.Errorf("a restart with the audit trail unwritable: %d, want 503 saying the trail cannot be written: %s", resp.StatusCode, body)
	}
	f.apply(t, fmt.Sprintf(gatewayConfig, f.audit))
	if resp := cc.post(server+"/restart", url.Values{"csrf": {cc.form(server)}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the restart once the trail can be written: %d, want 303", resp.StatusCode)
	}
	if got := f.takeManaged(); !slices.Equal(got, []string{"everything restart"}) {
		t.Errorf("the restart once the trail can be written asked for %q, want one everything restart", got)
	}
	if n := f.auditCount(t, `"method":"console/restart"`, `"outcome":"ok"`); n != 1 {
		t.Errorf("the trail has %d console/restart lines, want 1", n)
	}
}
