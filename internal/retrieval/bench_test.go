package retrieval

import (
	"path/filepath"
	"testing"

	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// BenchmarkNew indexes the real catalog, replicated to about 10,000 tools.
func BenchmarkNew(b *testing.B) {
	cat, err := LoadCatalog(filepath.Join("..", "..", "testdata", "toolcatalog", "catalog.json"))
	if err != nil {
		b.Fatal(err)
	}
	tools := cat.Replicas(10_000/cat.Len() + 1)[:10_000]
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.New(tools)
	}
}
