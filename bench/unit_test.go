package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentiles(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		in       []time.Duration
		p        float64
		want     time.Duration
		wantDesc string
	}{
		{nil, 50, 0, "no samples"},
		{ms(7), 99, 7 * time.Millisecond, "one sample"},
		{ms(5, 1, 4, 2, 3), 50, 3 * time.Millisecond, "odd count"},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond, "nearest rank, even count"},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond, "p99 of 10"},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 1 * time.Millisecond, "p10 of 10"},
	} {
		if got := percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("%s: percentile(%v) = %v, want %v", tc.wantDesc, tc.p, got, tc.want)
		}
	}
	got := []float64{median(nil), median([]float64{3, 1, 2}), median([]float64{4, 1, 3, 2}), float64(medianDur(ms(2, 6)))}
	if diff := cmp.Diff([]float64{0, 2, 2.5, float64(4 * time.Millisecond)}, got); diff != "" {
		t.Errorf("medians (-want +got):\n%s", diff)
	}
	q1, q3 := quartiles([]float64{8, 1, 7, 2, 6, 3, 5, 4})
	e1, e3 := quartiles(nil)
	if diff := cmp.Diff([]float64{2, 6, 0, 0}, []float64{q1, q3, e1, e3}); diff != "" {
		t.Errorf("quartiles (-want +got):\n%s", diff)
	}
	if r := ratio(1, 0); r != 0 {
		t.Errorf("ratio(1, 0) = %v, want 0", r)
	}
	lo, hi := minMaxDur(ms(3, 1, 2))
	if lo != time.Millisecond || hi != 3*time.Millisecond {
		t.Errorf("minMaxDur = %v, %v", lo, hi)
	}
}

func TestFormats(t *testing.T) {
	got := []string{
		fmtDur(0), fmtDur(1234 * time.Nanosecond), fmtDur(56789 * time.Nanosecond), fmtDur(2500 * time.Microsecond),
		fmtDur(345 * time.Millisecond), fmtDur(1500 * time.Millisecond),
		fmtRatio(0), fmtRatio(1.046), fmtRange(0, 0), fmtRange(0.5, 1.25),
		fmtRatioAgainst(1.004, 1), fmtRatioAgainst(0.998, 1), fmtRatioAgainst(1.046, 1),
		fmtRate(0), fmtRate(1234.4), fmtBytes(2048), fmtBytes(3 << 20),
		verdict(0, 1), verdict(1.05, 1.05), verdict(1.06, 1.05),
	}
	want := []string{
		"–", "1.23 µs", "56.8 µs", "2.50 ms", "345 ms", "1.50 s",
		"–", "1.05×", "", "[0.50–1.25]",
		"1.004×", "1.00×", "1.05×",
		"–", "1234/s", "2.0 KiB", "3.00 MiB",
		"not measured", "met", "missed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReplyID(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int64
		err  bool
	}{
		{`{"id":42,"jsonrpc":"2.0","result":{}}`, 42, false},
		{`{"jsonrpc":"2.0","id":43,"result":{}}`, 43, false},
		{`{"jsonrpc":"2.0","id":44}`, 44, false},
		{`{"id":x,`, 0, true},
		{`{"jsonrpc":"2.0","id":"s"}`, 0, true},
	} {
		got, err := replyID([]byte(tc.line))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("replyID(%s) = %d, %v; want %d, error %v", tc.line, got, err, tc.want, tc.err)
		}
	}
}

func TestRunChildErrors(t *testing.T) {
	for _, tc := range []struct {
		kind string
		env  map[string]string
		code int
		want string
	}{
		{"nosuch", nil, 2, `BENCH_CHILD="nosuch" is not a child kind`},
		{"memprobe", map[string]string{memServersEnv: "x"}, 1, `BENCH_MEM_SERVERS="x" is not a non-negative integer`},
		{"memprobe", map[string]string{memModeEnv: "bogus"}, 1, `BENCH_MEM_MODE="bogus": want raw or bridge`},
	} {
		var stdout, stderr bytes.Buffer
		code := runChild(context.Background(), tc.kind, func(k string) string { return tc.env[k] }, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d and %q", tc.kind, tc.env, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defgh "))
	if got := b.String(); got != "efgh" {
		t.Errorf("tail = %q, want %q", got, "efgh")
	}
}

func TestCatalogDefsAreValidJSON(t *testing.T) {
	defs := catalogDefs(12)
	if defs[0].name != touchTool || defs[11].name != "tool_00011" || defs[5].outputSchema == nil || defs[4].outputSchema != nil {
		t.Errorf("unexpected definitions: %q %q", defs[0].name, defs[11].name)
	}
	for _, d := range defs {
		if !json.Valid(d.raw()) {
			t.Errorf("%s: invalid JSON %s", d.name, d.raw())
		}
	}
	script := catalogScript(defs, 5)
	if len(script.Pages) != 3 || len(script.Pages[2].Tools) != 2 {
		t.Errorf("pages: %d, last with %d tools; want 3 pages, the last with 2", len(script.Pages), len(script.Pages[len(script.Pages)-1].Tools))
	}
	if math.IsNaN(ratio(0, 1)) {
		t.Error("ratio(0, 1) is NaN")
	}
}

func TestProfileLoopErrors(t *testing.T) {
	dir := t.TempDir()
	ok := func() error { return nil }
	boom := func() error { return errors.New("boom") }
	wantErr(t, "warm-up", profileLoop(filepath.Join(dir, "a"), ok, boom), "warming up: boom")
	wantErr(t, "loop", profileLoop(filepath.Join(dir, "b"), boom, nil), "boom")
	wantErr(t, "no directory", profileLoop(filepath.Join(dir, "nosuch", "c"), ok, nil), "creating the heap profile")
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	err := profileLoop(filepath.Join(dir, "d"), ok, nil)
	pprof.StopCPUProfile()
	wantErr(t, "profiler busy", err, "starting the CPU profile")
	if err := profileLoop(filepath.Join(dir, "e"), ok, ok); err != nil {
		t.Errorf("profileLoop: %v", err)
	}
}
