package toolview

import (
	"fmt"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// BenchmarkTools is what a harness pays before each model request with
// search on: 10,000 tools, two pinned globs, a few loaded.
func BenchmarkTools(b *testing.B) {
	reg := tool.NewRegistry()
	defs := make([]def, 10_000)
	for i := range defs {
		defs[i] = def{fmt.Sprintf("s%d", i%100), fmt.Sprintf("tool_%d", i), "Does thing number " + fmt.Sprint(i)}
	}
	publish(b, reg, defs)
	v, err := New(reg, Config{Mode: ModeOn, Pinned: []string{"mcp__s1__*", "mcp__s2__tool_2"}})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Search("thing number 42", 5); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Tools(); err != nil {
			b.Fatal(err)
		}
	}
}
