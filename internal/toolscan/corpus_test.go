package toolscan_test

import (
	"path/filepath"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/toolscan"
)

func loadCorpus(t testing.TB) *toolscan.Corpus {
	t.Helper()
	c, err := toolscan.LoadCorpus(filepath.Join("..", "..", "testdata", "toolscan", "poisoned.json"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCorpusRecall holds the scanner to its figures: at least 90% of the
// poisoned corpus flagged medium or high, at most 1% of the 312 real tools.
func TestCorpusRecall(t *testing.T) {
	c := loadCorpus(t)
	if len(c.Definitions) < 30 {
		t.Fatalf("corpus has %d definitions, want at least 30", len(c.Definitions))
	}
	s := toolscan.New(toolscan.Options{})
	if testing.Verbose() {
		for _, e := range c.Definitions {
			for _, f := range e.Scan(s) {
				t.Logf("%s: %s %s %s: %s", e.ID, f.Severity, f.Rule, f.Field, f.Excerpt)
			}
		}
	}
	sc := toolscan.Measure(s, c, catalogTools(t))
	t.Logf("recall %d/%d, false positives %d/%d", sc.Caught, sc.Poisoned, sc.Flagged, sc.Clean)
	if sc.Recall() < 0.9 {
		t.Errorf("recall %.1f%% (%d of %d), want at least 90%%; missed: %v", 100*sc.Recall(), sc.Caught, sc.Poisoned, sc.Missed)
	}
	if sc.FalsePositiveRate() > 0.01 {
		t.Errorf("%d of %d real tools flagged (%.1f%%), want at most 1%%: %v", sc.Flagged, sc.Clean, 100*sc.FalsePositiveRate(), sc.FlaggedNames)
	}
}
