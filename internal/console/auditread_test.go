package console

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// countingFile counts the bytes read from the trail.
type countingFile struct {
	*os.File
	read *atomic.Int64
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(p, off)
	c.read.Add(int64(n))
	return n, err
}

// bigTrail writes n chained entries, the first by carol and the rest by
// alice and bob in turn, named t-00000 on, and returns the file's path.
func bigTrail(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	appendTrail(t, path, 0, n)
	return path
}

func appendTrail(t *testing.T, path string, from, to int) {
	t.Helper()
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	who := []string{"alice", "bob"}
	for i := from; i < to; i++ {
		id := who[i%2]
		if i == 0 {
			id = "carol"
		}
		e := audit.Entry{Time: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second), Identity: id,
			Method: "tools/call", Name: fmt.Sprintf("t-%05d", i), Server: "everything", Outcome: "ok", Duration: 1.5}
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
}

func openCounting(t *testing.T, path string) (countingFile, *atomic.Int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	read := &atomic.Int64{}
	return countingFile{f, read}, read
}

func all(audit.Entry) bool { return true }

// A page of a large trail reads a chunk or two from its end, not the
// file; the older page goes on exactly where it stopped; a filter that
// matches little stops at maxScan and says where to go on.
func TestAuditPageReadsBounded(t *testing.T) {
	const n = 20000
	path := bigTrail(t, n)
	f, read := openCounting(t, path)
	info, _ := f.Stat()
	p, err := readBack(f, info.Size(), all, auditPageSize, maxAuditScan)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != auditPageSize || p.Entries[0].Name != "t-19999" || p.Entries[auditPageSize-1].Name != "t-19900" {
		t.Fatalf("the newest page has %d entries, %s … %s; want t-19999 … t-19900", len(p.Entries), p.Entries[0].Name, p.Entries[len(p.Entries)-1].Name)
	}
	if got := read.Load(); got > 2*auditChunk || p.Scanned != got {
		t.Errorf("the newest page read %d bytes (says %d) of a %d-byte trail, want at most %d", got, p.Scanned, info.Size(), 2*auditChunk)
	}
	older, err := readBack(f, p.Older, all, auditPageSize, maxAuditScan)
	if err != nil || older.Entries[0].Name != "t-19899" || older.Entries[auditPageSize-1].Name != "t-19800" {
		t.Errorf("the older page: %v, starts %s; want t-19899 … t-19800", err, older.Entries[0].Name)
	}
	read.Store(0)
	const scan = 1 << 20
	carol, err := readBack(f, info.Size(), func(e audit.Entry) bool { return e.Identity == "carol" }, auditPageSize, scan)
	if err != nil || len(carol.Entries) != 0 || carol.Older <= 0 || read.Load() > scan+auditChunk {
		t.Errorf("carol's page: %v, %d entries, older at %d, %d bytes read; want none found within %d bytes and a place to go on", err, len(carol.Entries), carol.Older, read.Load(), scan)
	}
	// Following the older links finds carol's one entry at the start.
	for end := carol.Older; end > 0; end = carol.Older {
		if carol, err = readBack(f, end, func(e audit.Entry) bool { return e.Identity == "carol" }, auditPageSize, scan); err != nil {
			t.Fatal(err)
		}
		if len(carol.Entries) > 0 {
			break
		}
	}
	if len(carol.Entries) != 1 || carol.Entries[0].Name != "t-00000" || carol.Older != -1 {
		t.Errorf("following the older links: %d entries, older %d; want carol's t-00000 and nothing older", len(carol.Entries), carol.Older)
	}
}

// The chain is verified once in full; the next page verifies only what
// the trail gained since.
func TestAuditChainVerifiedOnce(t *testing.T) {
	path := bigTrail(t, 20000)
	var cc chainCache
	f, read := openCounting(t, path)
	info, _ := f.Stat()
	st, err := cc.verify(path, f)
	if err != nil || st.Lines != 20000 || st.Broken != "" || read.Load() != info.Size() {
		t.Fatalf("first verify: %+v, %v, %d bytes read; want 20000 lines held, the whole file read", st, err, read.Load())
	}
	appendTrail(t, path, 20000, 20010)
	f2, read2 := openCounting(t, path)
	info2, _ := f2.Stat()
	st, err = cc.verify(path, f2)
	if err != nil || st.Lines != 20010 || st.Broken != "" || read2.Load() != info2.Size()-info.Size() {
		t.Errorf("second verify: %+v, %v, %d bytes read; want 20010 lines held, only the %d bytes appended read", st, err, read2.Load(), info2.Size()-info.Size())
	}
	// A trail rotated (another file at the path) is verified anew.
	rotated := bigTrail(t, 5)
	if err := os.Rename(rotated, path); err != nil {
		t.Fatal(err)
	}
	f3, _ := openCounting(t, path)
	if st, err = cc.verify(path, f3); err != nil || st.Lines != 5 {
		t.Errorf("after rotation: %+v, %v; want the new trail's 5 lines", st, err)
	}
}

// firstWrite records how much of the trail was read when the export first
// wrote: a streamed export writes long before it has read the trail.
type firstWrite struct {
	read    *atomic.Int64
	at      int64
	written int64
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.written == 0 {
		w.at = w.read.Load()
	}
	w.written += int64(len(p))
	return len(p), nil
}

func TestAuditExportStreams(t *testing.T) {
	path := bigTrail(t, 20000)
	f, read := openCounting(t, path)
	info, _ := f.Stat()
	w := &firstWrite{read: read}
	n, err := exportLines(w, io.NewSectionReader(f, 0, info.Size()), func(e audit.Entry) bool { return e.Identity == "alice" })
	if err != nil || n != 9999 {
		t.Fatalf("export: %d entries, %v; want alice's 9999", n, err)
	}
	if w.at > info.Size()/10 {
		t.Errorf("the export first wrote after reading %d of %d bytes: it holds the range instead of streaming it", w.at, info.Size())
	}
}

// A line far longer than a chunk (one written before lines were bounded,
// or by another program) is read in chunks that double, not copied again
// for every chunk; one longer than the scan bound is passed over, and the
// entries on either side of it are still found.
func TestAuditPageLongLine(t *testing.T) {
	path := bigTrail(t, 10)
	long := func(n int) string { return `{"identity":"x","name":"` + strings.Repeat("y", n) + `","prev":""}` + "\n" }
	trail, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	trail.WriteString(long(12 << 20))
	trail.Close()
	appendTrail(t, path, 10, 11)
	f, _ := openCounting(t, path)
	info, _ := f.Stat()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := readBack(f, info.Size(), all, auditPageSize, maxAuditScan)
	runtime.ReadMemStats(&after)
	if err != nil || len(p.Entries) != 11 || p.Entries[0].Name != "t-00010" || p.Entries[10].Name != "t-00000" {
		t.Fatalf("the page around a 12 MiB line: %v, %d entries; want all 11 beside it", err, len(p.Entries))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 128<<20 {
		t.Errorf("reading past a 12 MiB line allocated %d MiB", got>>20)
	}
	older := int64(-2)
	for end, pages := info.Size(), 0; end > 0 && pages < 10; end, pages = older, pages+1 {
		q, err := readBack(f, end, func(e audit.Entry) bool { return e.Name == "t-00000" }, auditPageSize, 4<<20)
		if err != nil {
			t.Fatal(err)
		}
		if older = q.Older; len(q.Entries) == 1 {
			return // found past the line, a page at a time
		}
	}
	t.Errorf("with a 4 MiB scan bound, the entry before a 12 MiB line was not found (older %d)", older)
}

// A line put in the trail without a prev (no entry the gateway wrote:
// verify says where it was inserted) is neither shown nor exported as a
// call. It used to be shown and exported like any other.
func TestAuditLineWithoutPrevNotAnEntry(t *testing.T) {
	for line, want := range map[string]bool{
		`{"time":"1970-01-01T00:00:00Z","identity":"alice","method":"tools/call","name":"x","outcome":"ok","prev":"` + audit.Genesis + `"}`: true,
		`{"time":"1970-01-01T00:00:00Z","identity":"alice","method":"tools/call","name":"x","outcome":"ok"}`:                                false,
		`{"time":"1970-01-01T00:00:00Z","identity":"alice","method":"tools/call","name":"x","outcome":"ok","prev":null}`:                    false,
	} {
		if _, ok := entryOf([]byte(line)); ok != want {
			t.Errorf("entryOf(%s) = %v, want %v", line, ok, want)
		}
	}
}
