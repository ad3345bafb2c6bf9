package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A caller controls much of a line: its client's name, a resource's URI
// (the entry's name), the arguments and their keys. Sent as megabytes of
// "<", which JSON writes six bytes each, none of it makes a line the next
// run cannot chain past (it reads the trail's last 1 MiB): each line stays
// under 256 KiB, cut where it was long, and the chain holds across runs.
func TestWriteBoundsWhatCallersControl(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("<", 4<<20)
	args := json.RawMessage(`{"x":"` + huge[:1<<20] + `"}`)
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = strconv.Itoa(i) + huge[:1000]
	}
	hostile := Entry{Time: time.Unix(0, 0).UTC(), Identity: "eve", Client: huge, Method: "resources/read", Name: "mem://item/" + huge,
		Outcome: "denied", Reason: huge, Args: args, ArgKeys: keys}
	for _, e := range []Entry{{Identity: "eve", Name: "é" + huge[:maxFieldBytes]}, hostile} {
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	writeN(t, path, "after")
	if rep, err := verifyFile(t, path); err != nil || rep.Lines != 3 {
		t.Fatalf("Verify: %+v, %v; want 3 lines chained across runs", rep, err)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	for i, line := range lines {
		if len(line) > 256<<10 {
			t.Errorf("line %d is %d bytes", i+1, len(line))
		}
	}
	var got Entry
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil || !utf8.ValidString(got.Name) || !strings.HasPrefix(got.Name, "é") {
		t.Errorf("a name cut after a two-byte character: %q (%v)", got.Name, err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(args)
	if got.Args != nil || got.ArgsHash != ArgsHashPrefix+hex.EncodeToString(sum[:]) {
		t.Errorf("arguments over the bound: args %.40q, argsHash %q; want their SHA-256", got.Args, got.ArgsHash)
	}
	if len(got.ArgKeys) != maxArgKeys+1 || got.ArgKeys[maxArgKeys] != cutMark || !strings.HasSuffix(got.ArgKeys[0], cutMark) {
		t.Errorf("%d keys, the last %q; want %d cut ones and the mark", len(got.ArgKeys), got.ArgKeys[len(got.ArgKeys)-1], maxArgKeys)
	}
	for _, f := range []string{got.Client, got.Name, got.Reason} {
		if !strings.HasSuffix(f, cutMark) || len(f) > 4*maxFieldBytes {
			t.Errorf("a field of %d bytes ends %q: want it cut", len(f), f[max(0, len(f)-8):])
		}
	}
}
