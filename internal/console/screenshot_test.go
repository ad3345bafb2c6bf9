package console_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

var updateShots = flag.Bool("update-screenshots", false, "write the pages' screenshots to docs/console/")

// Every page renders in the browser at 1280×800 with real data; with
// -update-screenshots the shots become docs/console.md's pictures.
func TestScreenshots(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, getSum(t, f), map[string]string{"a": "2", "b": "40"})
	signIn(t, ctx, f.URL, bobToken)
	tryHidden(t, ctx, f.URL, getSum(t, f), [2]string{"arg.a", "1"}, [2]string{"arg.b", "1"})
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, "flaky", nil) // an error for the traffic page's charts
	dir := t.TempDir()
	if *updateShots {
		dir = filepath.Join("..", "..", "docs", "console")
	}
	shots := []struct{ name, path string }{
		{"servers", "/console"},
		{"server", "/console/servers/everything"},
		{"tools", "/console/tools?q=add+two+numbers"},
		{"traffic", "/console/traffic"},
		{"audit", "/console/audit"},
	}
	for _, s := range shots {
		do(t, ctx, chromedp.Navigate(f.URL+s.path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		shot(t, ctx, dir, s.name)
	}
	tryIt(t, ctx, f.URL, getSum(t, f), map[string]string{"a": "2", "b": "40"})
	shot(t, ctx, dir, "tool")
	// At a phone's width the page fits without scrolling sideways.
	do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil || wide {
		t.Errorf("at 390 px the tools page scrolls sideways (%v)", err)
	}
	shot(t, ctx, dir, "tools-phone")
}

func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
