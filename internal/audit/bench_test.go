package audit

import (
	"path/filepath"
	"testing"
	"time"
)

func BenchmarkWrite(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Identity: "bench", Client: "bench-client", Session: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", Method: "tools/call", Name: "mcp__bench__echo", Server: "bench", Outcome: "ok", ArgKeys: []string{"text"}, Duration: 0.123}
	b.ReportAllocs()
	for b.Loop() {
		e.Time = time.Now()
		if err := l.Write(e); err != nil {
			b.Fatal(err)
		}
	}
}
