package audit

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// marshalled is e as encoding/json writes it, with prev.
func marshalled(t *testing.T, e Entry, prev string) string {
	t.Helper()
	e.Prev = prev
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

// appendEntry writes the bytes encoding/json would: a trail written
// before it, and every reader, see the same lines.
func TestAppendEntryIsJSONMarshal(t *testing.T) {
	at := time.Date(2026, 12, 2, 0, 30, 1, 123456789, time.FixedZone("X", 3600))
	for name, e := range map[string]Entry{
		"minimal":  {},
		"typical":  {Time: at.UTC(), Identity: "alice", Client: "claude-code", Session: "S1", Method: "tools/call", Name: "mcp__github__get_issue", Server: "github", Outcome: "ok", Duration: 0.412, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", ArgKeys: []string{"owner", "repo"}},
		"zone":     {Time: at, Duration: 1234567.5},
		"refusal":  {Identity: "mallory", Method: "prompts/get", Outcome: "denied", Reason: "policy rule at line 12"},
		"hash":     {ArgsHash: strings.Repeat("ab", 32)},
		"program":  {Name: "run_code", Call: "9f86d081884c7d65"},
		"inner":    {Name: "mcp__fs__read", ArgsHash: "ab", Parent: "9f86d081884c7d65"},
		"full":     {Args: json.RawMessage("{ \"a\" : [1, 2,\n3], \"h\":\"<b>&</b>\" }")},
		"escapes":  {Identity: "q\"b\\s/\n\r\t\b\f\x00\x1f\x7f<>&", Name: "\u2028\u2029 é 日本 🎉", Client: "bad\xffutf8\xc3"},
		"tiny":     {Duration: 1e-7},
		"huge":     {Duration: 2e21},
		"negative": {Duration: -0.5},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := appendEntry(nil, &e, []byte(Genesis))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(marshalled(t, e, Genesis), string(got)); d != "" {
				t.Errorf("(-encoding/json +appendEntry):\n%s", d)
			}
		})
	}
}

func FuzzAppendEntry(f *testing.F) {
	f.Add("alice", "tools/call", "mcp__x__y", "ok", 0.25, `{"a":1}`, "k")
	f.Add("q\"<\xff\u2028", "", "\x00", "denied", 1e-9, ``, "")
	f.Fuzz(func(t *testing.T, identity, method, name, outcome string, ms float64, args, key string) {
		e := Entry{Time: time.Unix(1e9, 5).UTC(), Identity: identity, Method: method, Name: name, Outcome: outcome, Duration: ms, ArgKeys: []string{key}}
		if json.Valid([]byte(args)) {
			e.Args = json.RawMessage(args)
		}
		got, err := appendEntry(nil, &e, []byte(Genesis))
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			if err == nil {
				t.Fatalf("duration %v encoded: %s", ms, got)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := marshalled(t, e, Genesis); string(got) != want {
			t.Fatalf("appendEntry:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}

// An entry that cannot be encoded is refused, and the chain stays as it
// was: the next line chains to the last one written.
func TestWriteRefusesUnencodable(t *testing.T) {
	var sb strings.Builder
	l := newLog(&sb, nil, Genesis)
	for _, e := range []Entry{{Name: "a"}, {Name: "nan", Duration: math.NaN()}, {Name: "year", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, {Name: "b"}} {
		err := l.Write(e)
		if bad := e.Name == "nan" || e.Name == "year"; bad != (err != nil) {
			t.Errorf("Write(%s): %v", e.Name, err)
		}
	}
	if rep, err := Verify(strings.NewReader(sb.String())); err != nil || rep.Lines != 2 || rep.Torn != 0 {
		t.Errorf("Verify: %+v, %v; want the 2 good lines chained\n%s", rep, err, sb.String())
	}
}

// failing fails its writes while fail is set.
type failing struct {
	strings.Builder
	fail bool
}

func (f *failing) Write(p []byte) (int, error) {
	if f.fail {
		return 0, errors.New("disk full")
	}
	return f.Builder.Write(p)
}

// A failed write is returned and kept by Err until a write succeeds, and
// does not advance the chain; a line too long to keep its buffer is still
// written whole; arguments that are not JSON are refused.
func TestWriteFailuresAndLongLines(t *testing.T) {
	w := &failing{}
	l := newLog(w, nil, Genesis)
	w.fail = true
	if err := l.Write(Entry{Name: "lost"}); err == nil || l.Err() == nil {
		t.Fatalf("Write to a failing writer: %v, Err %v", err, l.Err())
	}
	w.fail = false
	big := json.RawMessage(`{"blob":"` + strings.Repeat("x", 2*maxKeptBuf) + `"}`)
	for _, e := range []Entry{{Name: "a"}, {Name: "big", Args: big}, {Name: "b"}} {
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if l.Err() != nil || cap(l.buf) > maxKeptBuf {
		t.Errorf("after good writes: Err %v, kept buffer %d bytes", l.Err(), cap(l.buf))
	}
	if err := l.Write(Entry{Name: "bad", Args: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("arguments that are not JSON were written")
	}
	rep, err := Verify(strings.NewReader(w.String()))
	if err != nil || rep.Lines != 3 || strings.Contains(w.String(), "lost") {
		t.Errorf("Verify: %+v, %v; want the 3 written lines chained", rep, err)
	}
}
