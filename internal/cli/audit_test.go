package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// `audit verify` fails a trail whose first lines were cut and a file that
// is no trail, naming the line; it verifies a rotated trail given oldest
// first, and the newer file alone from the older one's last hash (which
// it prints). It used to read "chain intact" for both of the first, exit
// 0.
func TestAuditVerifyFindsACutStart(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(trail, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := l.Write(audit.Entry{Time: time.Now(), Identity: "alice", Method: "tools/call", Name: name, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	data, _ := os.ReadFile(trail)
	lines := strings.SplitAfter(string(data), "\n")
	old, cur := filepath.Join(dir, "audit.jsonl.1"), filepath.Join(dir, "cut.jsonl")
	os.WriteFile(old, []byte(lines[0]+lines[1]), 0o600)
	os.WriteFile(cur, []byte(lines[2]), 0o600)
	notTrail := filepath.Join(dir, "x")
	os.WriteFile(notTrail, []byte("hello\nworld\n"), 0o600)

	if r := mcpbridge(t, "", "audit", "verify", cur); r.code != 1 || !strings.Contains(r.stderr, cur+":1: the chain is broken: the trail begins mid-chain") {
		t.Errorf("a trail whose first lines were cut: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := mcpbridge(t, "", "audit", "verify", notTrail); r.code != 1 || !strings.Contains(r.stderr, notTrail+":1: the chain is broken: it is not an audit entry") {
		t.Errorf("a file that is no trail: %d %q %q", r.code, r.stdout, r.stderr)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if r := mcpbridge(t, "", "audit", "verify", empty); r.code != 1 || !strings.Contains(r.stderr, "no audit entry in it") {
		t.Errorf("an empty file: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := mcpbridge(t, "", "audit", "verify", old, cur)
	if r.code != 0 || !strings.Contains(r.stdout, "3 entries, chain intact") {
		t.Fatalf("the rotated trail oldest first: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "audit", "verify", old)
	_, last, _ := strings.Cut(strings.TrimSpace(r.stdout), "last hash ")
	if r := mcpbridge(t, "", "audit", "verify", "--after", last, cur); r.code != 0 || !strings.Contains(r.stdout, "1 entries, chain intact") {
		t.Errorf("the newer file after the older one's last hash %q: %d %q %q", last, r.code, r.stdout, r.stderr)
	}
	if r := mcpbridge(t, "", "audit", "verify", "--after", "nothex", cur); r.code != 2 || !strings.Contains(r.stderr, "is no SHA-256 hash") {
		t.Errorf("--after nothex: %d %q", r.code, r.stderr)
	}
}
