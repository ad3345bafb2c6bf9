package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func writeN(t *testing.T, path string, names ...string) {
	t.Helper()
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, n := range names {
		if err := l.Write(Entry{Time: time.Unix(0, 0).UTC(), Identity: "alice", Method: "tools/call", Name: n, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
}

// A trail written in two runs verifies as one chain; a torn last line (a
// crash mid-write) is skipped and the next run chains past it.
func TestChainAcrossRunsAndTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, "a", "b")
	writeN(t, path, "c")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"1970-01-01T00:00:00Z","identity":"al`)
	f.Close()
	rep, err := verifyFile(t, path)
	if err != nil || rep.Lines != 3 || rep.Torn != 1 {
		t.Fatalf("Verify: %+v, %v; want 3 entries and a torn line", rep, err)
	}
	writeN(t, path, "d")
	if rep, err := verifyFile(t, path); err != nil || rep.Lines != 4 || rep.Torn != 1 {
		t.Fatalf("Verify after the next run: %+v, %v; want 4 entries chained past the torn line", rep, err)
	}
	if !strings.Contains(readAll(t, path), `"prev":"`+Genesis+`"`) {
		t.Error("the first line does not chain to Genesis")
	}
}

// Editing, removing or inserting a line breaks the chain at the line
// after it, and Verify names that line.
func TestVerifyFindsTampering(t *testing.T) {
	for name, tamper := range map[string]func([]string) []string{
		"edited":   func(l []string) []string { l[1] = strings.Replace(l[1], `"alice"`, `"bob"`, 1); return l },
		"garbled":  func(l []string) []string { l[1] = "garbage"; return l },
		"removed":  func(l []string) []string { return append(l[:1], l[2:]...) },
		"inserted": func(l []string) []string { return append(l[:2], append([]string{l[0]}, l[2:]...)...) },
		"reordered": func(l []string) []string {
			l[1], l[2] = l[2], l[1]
			return l
		},
		// a made-up call without prev, which verify used to skip as torn
		// (and the console showed as a call)
		"forged without prev": func(l []string) []string {
			forged := `{"time":"1970-01-01T00:00:00Z","identity":"alice","method":"tools/call","name":"mcp__github__delete_repo","outcome":"ok"}`
			return append(l[:2], append([]string{forged}, l[2:]...)...)
		},
		"forged with a null prev": func(l []string) []string {
			forged := `{"time":"1970-01-01T00:00:00Z","identity":"alice","method":"tools/call","name":"x","outcome":"ok","prev":null}`
			return append(l[:2], append([]string{forged}, l[2:]...)...)
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			writeN(t, path, "a", "b", "c", "d")
			lines := strings.Split(strings.TrimSuffix(readAll(t, path), "\n"), "\n")
			os.WriteFile(path, []byte(strings.Join(tamper(lines), "\n")+"\n"), 0o600)
			_, err := verifyFile(t, path)
			var be *BrokenError
			if !errors.As(err, &be) || be.Line < 2 || be.Line > 3 {
				t.Fatalf("Verify: %v; want the chain broken at line 2 or 3", err)
			}
		})
	}
}

// A write that fails part way (a full disk) leaves part of a line: the
// next line starts a line of its own, so the trail verifies with the
// fragment skipped as torn. The next line used to be glued to the
// fragment, both lost, and verify reported the trail broken for good.
func TestPartialWriteDoesNotBreakTheChain(t *testing.T) {
	var buf strings.Builder
	w := &failingOnce{w: &buf}
	l := newLog(w, nil, Genesis)
	for _, n := range []string{"a", "b", "c", "d"} {
		w.failNext = n == "b"
		err := l.Write(Entry{Time: time.Unix(0, 0).UTC(), Identity: "alice", Method: "tools/call", Name: n, Outcome: "ok"})
		if (err != nil) != (n == "b") {
			t.Fatalf("writing %s: %v", n, err)
		}
	}
	rep, err := Verify(strings.NewReader(buf.String()))
	if err != nil || rep.Lines != 3 || rep.Torn != 1 {
		t.Fatalf("Verify: %+v, %v; want 3 entries and the fragment torn\n%s", rep, err, buf.String())
	}
}

// failingOnce writes part of what it is given (half, or all but the
// last byte: allButOne) and fails, when told to.
type failingOnce struct {
	w         *strings.Builder
	failNext  bool
	allButOne bool
}

func (f *failingOnce) Write(p []byte) (int, error) {
	if f.failNext {
		keep := len(p) / 2
		if f.allButOne {
			keep = len(p) - 1
		}
		n, _ := f.w.Write(p[:keep])
		return n, errors.New("no space left on device")
	}
	return f.w.Write(p)
}

// A write that fails after all of its line but the newline left a whole
// entry: the next line follows it, as verify (and a restart) read it. It
// used to chain past it as torn, and verify found the next prev wrong.
func TestWriteFailingBeforeItsNewline(t *testing.T) {
	var buf strings.Builder
	w := &failingOnce{w: &buf, allButOne: true}
	l := newLog(w, nil, Genesis)
	for _, n := range []string{"a", "b", "c"} {
		w.failNext = n == "b"
		l.Write(Entry{Time: time.Unix(0, 0).UTC(), Identity: "alice", Method: "tools/call", Name: n, Outcome: "ok"})
	}
	if rep, err := Verify(strings.NewReader(buf.String())); err != nil || rep.Lines != 3 {
		t.Fatalf("Verify: %+v, %v; want 3 entries\n%s", rep, err, buf.String())
	}
}

// A crash that left a whole entry without its newline: the next run
// chains to that entry, which the newline it writes first completes. It
// used to chain past it as torn, and verify found the next line's prev
// wrong.
func TestTornNewlineOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	writeN(t, path, "a", "b")
	data := readAll(t, path)
	if err := os.WriteFile(path, []byte(strings.TrimSuffix(data, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	writeN(t, path, "c")
	if rep, err := verifyFile(t, path); err != nil || rep.Lines != 3 || rep.Torn != 0 {
		t.Fatalf("Verify: %+v, %v; want 3 entries", rep, err)
	}
}

func verifyFile(t *testing.T, path string) (Report, error) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Verify(f)
}

func readAll(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// After Close, Write says so; Close is idempotent.
func TestWriteAfterClose(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(l.Close(), l.Close()); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Entry{Name: "late"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

// A trail has one writer: a second Open of the same file (another serve
// with the same config, or a reload naming the file another way) is
// refused, saying why, until the first closes. Two writers used to
// interleave their chains, which verify reported as tampering.
func TestOneWriterATrail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	first, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	respelled := filepath.Join(filepath.Dir(path), ".", "audit.jsonl")
	if second, err := Open(respelled, nil); err == nil || !strings.Contains(err.Error(), "is written by another mcpbridge") {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second writer: %v, want it refused", err)
	}
	first.Close()
	second, err := Open(path, nil)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	second.Close()
}
