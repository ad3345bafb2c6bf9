package toolsearch

import (
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The fields of a tool that New weighs separately.
const (
	fieldName        = iota // the tool's own name, without the server prefix
	fieldTitle              // Title
	fieldDescription        // Description
	fieldParamNames         // input schema property names
	fieldParamTexts         // their descriptions, titles and enum values
	fieldServer             // the server's name
	numFields
)

// field is how one field counts in BM25F: its weight, and how much its
// length normalises (b, 0 to 1).
type field struct {
	weight, b float64
}

// config is a ranking: field weights, BM25's k1, and which query-side
// additions are on.
type config struct {
	fields  [numFields]field
	k1      float64
	merged  bool // one bag of words: public name, description, parameter names
	phrases bool // join multi-word aliases ("pull request")
	expand  bool // aliases and prefix completions at query time
	whole   bool // camel-case words also whole (see camelMode)
	raw     bool // words as written (see analyzer.raw)
}

// camel returns mode when c keeps camel-case words whole, else camelSplit.
func (c *config) camel(mode camelMode) camelMode {
	if c.whole {
		return mode
	}
	return camelSplit
}

// rankerConfig is New's ranking. A name says what a tool does in two or
// three words, so a word there weighs most, and a long name is normalised
// less than a long description; parameter names say what a tool works on
// ("owner", "repo", "url"), their descriptions add detail but also noise.
var rankerConfig = config{
	fields: [numFields]field{
		fieldName:        {weight: 3, b: 0.5},
		fieldTitle:       {weight: 2, b: 0.5},
		fieldDescription: {weight: 1, b: 0.75},
		fieldParamNames:  {weight: 1, b: 0.5},
		fieldParamTexts:  {weight: 0.4, b: 0.75},
		fieldServer:      {weight: 1.5, b: 0},
	},
	k1:      1.2,
	phrases: true,
	expand:  true,
	whole:   true,
}

// baselineConfig is NewBaseline's plain BM25: everything in one field.
var baselineConfig = config{
	fields: [numFields]field{fieldDescription: {weight: 1, b: 0.75}},
	k1:     1.2,
	merged: true,
}

// rawBaselineConfig is NewRawBaseline's: baselineConfig on raw words.
var rawBaselineConfig = func() config {
	c := baselineConfig
	c.raw = true
	return c
}()

// Query-side expansion.
const (
	firstTermBoost = 1.5 // see Index.concepts
	aliasWeight    = 0.6 // an alias counts this much of the word itself
	prefixWeight   = 0.5 // and so does a completion of a word's beginning
	minPrefix      = 3   // shortest query term that is completed
	maxCompletions = 3   // completions per query term
	maxCandidates  = 64  // terms with the prefix looked at for them
)

// maxDescription bounds the bytes of a description that are indexed: the
// first few paragraphs say what a tool is for, the rest is usage detail.
const maxDescription = 8 << 10

// texts returns the text of each field of t.
func (c *config) texts(t tool.Tool) [numFields][]string {
	var out [numFields][]string
	desc := t.Description
	if len(desc) > maxDescription {
		desc = desc[:maxDescription]
	}
	params := paramWords(t.InputSchema)
	if c.merged {
		out[fieldDescription] = append([]string{t.Name, desc}, params.names...)
		return out
	}
	server, name := splitName(t)
	out[fieldName] = []string{name}
	out[fieldTitle] = []string{t.Title}
	out[fieldDescription] = []string{desc}
	out[fieldParamNames] = params.names
	out[fieldParamTexts] = params.texts
	out[fieldServer] = []string{server}
	return out
}

// splitName returns the server and the tool's own name: t.Origin's when
// set, else what the public name mcp__<server>__<name> holds, else no
// server and the whole name.
func splitName(t tool.Tool) (server, name string) {
	name = t.Name
	if rest, ok := strings.CutPrefix(t.Name, "mcp__"); ok {
		if s, n, ok := strings.Cut(rest, "__"); ok {
			server, name = s, n
		}
	}
	if t.Origin.Server != "" {
		server = t.Origin.Server
	}
	if t.Origin.Name != "" {
		name = t.Origin.Name
	}
	return server, name
}

// builder holds the state of one build.
type builder struct {
	x    *Index
	a    analyzer
	buf  []string
	acc  []float64 // by term id: the current tool's pseudo frequency
	used []int32   // term ids with acc > 0
}

func build(tools []tool.Tool, cfg *config) *Index {
	x := &Index{cfg: cfg, docs: make([]doc, len(tools)), terms: make(map[string]int32), servers: servers{byTerm: map[string][]int32{}}}
	b := &builder{x: x, a: analyzer{raw: cfg.raw, camel: cfg.camel(camelBoth), phrases: cfg.phrases, cache: make(map[string]wordInfo)}}
	serverIDs := map[string]int32{}
	// First pass: every field's terms, and the fields' average lengths.
	docTerms := make([][numFields][]int32, len(tools))
	var avg [numFields]float64
	for i, t := range tools {
		server, _ := splitName(t)
		x.docs[i] = doc{name: t.Name, description: t.Description, server: b.addServer(serverIDs, server)}
		x.servers.tools[x.docs[i].server]++
		for f, texts := range cfg.texts(t) {
			docTerms[i][f] = b.intern(texts)
			avg[f] += float64(len(docTerms[i][f]))
		}
	}
	for f := range avg {
		avg[f] /= float64(max(len(tools), 1))
	}
	// Second pass: the postings, one tool at a time, so that each list is
	// sorted by tool.
	b.acc = make([]float64, len(x.vocab))
	for i := range docTerms {
		b.add(int32(i), &docTerms[i], &avg)
	}
	x.byText = make([]int32, len(x.vocab))
	for i := range x.byText {
		x.byText[i] = int32(i)
	}
	slices.SortFunc(x.byText, func(a, b int32) int { return strings.Compare(x.vocab[a], x.vocab[b]) })
	return x
}

// intern returns the term ids of texts, adding new terms to the index.
func (b *builder) intern(texts []string) []int32 {
	b.buf = b.buf[:0]
	for _, s := range texts {
		b.buf = b.a.appendTerms(b.buf, s)
	}
	if len(b.buf) == 0 {
		return nil
	}
	ids := make([]int32, len(b.buf))
	for i, t := range b.buf {
		id, ok := b.x.terms[t]
		if !ok {
			id = int32(len(b.x.vocab))
			b.x.terms[t] = id
			b.x.vocab = append(b.x.vocab, t)
			b.x.postings = append(b.x.postings, nil)
		}
		ids[i] = id
	}
	return ids
}

// add appends doc's postings: for each term, the sum over fields of the
// field's weight divided by its length normalisation, once per occurrence.
func (b *builder) add(doc int32, fields *[numFields][]int32, avg *[numFields]float64) {
	for f, ids := range fields {
		if len(ids) == 0 {
			continue
		}
		p := b.x.cfg.fields[f]
		inc := p.weight / (1 - p.b + p.b*float64(len(ids))/avg[f])
		for _, id := range ids {
			if b.acc[id] == 0 {
				b.used = append(b.used, id)
			}
			b.acc[id] += inc
		}
	}
	for _, id := range b.used {
		b.x.postings[id] = append(b.x.postings[id], posting{doc: doc, tf: float32(b.acc[id])})
		b.acc[id] = 0
	}
	b.used = b.used[:0]
}
