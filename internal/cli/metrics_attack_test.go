package cli

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The --metrics-addr listener under the attacks of the HTTP edge, against
// a real serve process: 1,000 sockets sending 900 KB of headers they never
// finish must not grow its memory; a socket that sends nothing is closed
// within the header timeout; 1,100 sockets declaring bodies they never send,
// or sending nothing, must not keep a scrape out.
func TestMetricsListenerUnderAttack(t *testing.T) {
	mcptest.RaiseFDLimit(t, 4096)
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServingCmd(t, measuredCommand(t, "serve", "--http", "127.0.0.1:0", "--config", cfg,
		"--token-env", "GW_AUTH", "--metrics-addr", "127.0.0.1:0"), []string{"GW_AUTH=s3cret"})
	if p.metricsURL == "" {
		t.Fatalf("no metrics listener announced:\n%s", p.stderr)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(p.metricsURL, "http://"), "/metrics")
	scrapeUnderAttack(t, p.metricsURL)
	before := procStatusKiB(t, p.pid, "VmRSS")

	pad := []byte("GET /metrics HTTP/1.1\r\nHost: " + addr + "\r\nX-Pad: " + strings.Repeat("a", 900<<10))
	conns := attackDial(t, addr, 1000)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(pad)
			io.Copy(io.Discard, c) // until serve answers (431) and closes, or 5 s
		})
	}
	wg.Wait()
	peak := procStatusKiB(t, p.pid, "VmHWM")
	t.Logf("1,000 sockets × 900 KB of unfinished headers on the metrics port: serve's peak RSS %d -> %d MiB", before>>10, peak>>10)
	if grown := peak - before; grown > 100<<10 {
		t.Errorf("serve's peak RSS grew by %d MiB under 1,000 unfinished 900 KB headers on the metrics port, want under 100 MiB", grown>>10)
	}
	attackClose(conns)

	silentClosed(t, addr)

	conns = attackDial(t, addr, 1100)
	for _, c := range conns {
		io.WriteString(c, "POST /metrics HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 200000\r\n\r\n")
	}
	start := time.Now()
	scrapeUnderAttack(t, p.metricsURL)
	t.Logf("1,100 sockets declaring unsent bodies: scraped in %v", time.Since(start).Round(time.Millisecond))
	attackClose(conns)

	conns = attackDial(t, addr, 1100)
	start = time.Now()
	scrapeUnderAttack(t, p.metricsURL)
	t.Logf("1,100 silent sockets: scraped in %v", time.Since(start).Round(time.Millisecond))
	attackClose(conns)
}

// silentClosed checks that serve closes a metrics connection that sends
// nothing within the header timeout (2 s), with room for a loaded machine.
func silentClosed(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(start.Add(6 * time.Second))
	_, err = io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a silent socket on the metrics port was still open after %v, want it closed within the 2 s header timeout", time.Since(start).Round(time.Millisecond))
	}
	t.Logf("a silent socket on the metrics port was closed after %v", time.Since(start).Round(time.Millisecond))
}

// scrapeUnderAttack scrapes url within 5 s.
func scrapeUnderAttack(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("a scrape could not reach %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("a scrape of %s: %s\n%.300s", url, resp.Status, body)
	}
}
