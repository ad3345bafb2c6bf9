package toolscan

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Corpus is a file of poisoned definitions (testdata/toolscan/poisoned.json):
// what the scanner must flag, for its tests and the benchmark.
type Corpus struct {
	Definitions []CorpusEntry `json:"definitions"`
}

// CorpusEntry is one poisoned tool or prompt, in its wire form.
type CorpusEntry struct {
	ID     string `json:"id"`
	Origin string `json:"origin"` // the public write-up it is modeled on
	Server string `json:"server"`
	Tool   *struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	} `json:"tool"`
	Prompt *struct {
		Name        string                `json:"name"`
		Title       string                `json:"title"`
		Description string                `json:"description"`
		Arguments   []tool.PromptArgument `json:"arguments"`
	} `json:"prompt"`
}

// LoadCorpus reads a corpus file; each entry must hold a tool or a prompt.
func LoadCorpus(path string) (*Corpus, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Corpus
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range c.Definitions {
		if (e.Tool == nil) == (e.Prompt == nil) {
			return nil, fmt.Errorf("%s: definitions[%d] (%q): want exactly one of tool and prompt", path, i, e.ID)
		}
	}
	return &c, nil
}

// Scan scans the entry with s.
func (e CorpusEntry) Scan(s *Scanner) []Finding {
	if t := e.Tool; t != nil {
		return s.Tool(tool.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, Origin: tool.Origin{Server: e.Server, Name: t.Name}})
	}
	p := e.Prompt
	return s.Prompt(tool.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments,
		Origin: tool.Origin{Server: e.Server, Name: p.Name}})
}

// Score is how a scanner does on a corpus and on clean tools.
type Score struct {
	Poisoned, Caught int      // corpus entries; those flagged medium or high
	Missed           []string // ids of the entries not flagged
	Clean, Flagged   int      // clean tools; those flagged medium or high
	FlaggedNames     []string // server/tool of the clean tools flagged
}

// Recall is Caught/Poisoned.
func (s Score) Recall() float64 { return ratio(s.Caught, s.Poisoned) }

// FalsePositiveRate is Flagged/Clean.
func (s Score) FalsePositiveRate() float64 { return ratio(s.Flagged, s.Clean) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Measure scores s on the corpus and on clean tools.
func Measure(s *Scanner, c *Corpus, clean []tool.Tool) Score {
	sc := Score{Poisoned: len(c.Definitions), Clean: len(clean)}
	for _, e := range c.Definitions {
		if Flagged(e.Scan(s)) {
			sc.Caught++
		} else {
			sc.Missed = append(sc.Missed, e.ID)
		}
	}
	for _, t := range clean {
		if Flagged(s.Tool(t)) {
			sc.Flagged++
			sc.FlaggedNames = append(sc.FlaggedNames, t.Origin.Server+"/"+t.Origin.Name)
		}
	}
	return sc
}
