package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/retrieval"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// searchResults is what the search rows measured.
type searchResults struct {
	cat     *retrieval.Catalog
	queries []retrieval.Query
	scores  map[string][3]retrieval.Scores // by split ("" is all): ranker, baseline, raw baseline
	budget  budgetResults
	latency []latencyResult
	large   int // tools of the latency row's large catalog
}

// budgetResults are the model-visible tokens of the catalog.
type budgetResults struct {
	offTools, offTokens int
	onTools, onTokens   int
	afterSearch         []float64 // tokens visible after one search_tools call, per query
	afterTools          []float64 // tools visible after one search_tools call, per query
}

// latencyResult is one ranking on one catalog size.
type latencyResult struct {
	kind     string
	tools    int
	build    time.Duration // median index build
	p50, p99 time.Duration // per query
	slowest  time.Duration // the slowest query's fastest pass
}

// runSearch measures the search rows on the committed retrieval set.
func runSearch(root string, o options, logf func(string, ...any)) (*searchResults, error) {
	dir := filepath.Join(root, "testdata", "toolcatalog")
	cat, err := retrieval.LoadCatalog(filepath.Join(dir, "catalog.json"))
	if err != nil {
		return nil, err
	}
	qs, err := retrieval.LoadQueries(filepath.Join(dir, "queries.tsv"), cat)
	if err != nil {
		return nil, err
	}
	res := &searchResults{cat: cat, queries: qs, scores: map[string][3]retrieval.Scores{}}
	tools := cat.Tools()
	ranker, base, raw := toolsearch.New(tools), toolsearch.NewBaseline(tools), toolsearch.NewRawBaseline(tools)
	for _, split := range []string{"", retrieval.Tune, retrieval.Held} {
		set := qs
		if split != "" {
			set = retrieval.Of(qs, split)
		}
		res.scores[split] = [3]retrieval.Scores{retrieval.Evaluate(ranker, set), retrieval.Evaluate(base, set), retrieval.Evaluate(raw, set)}
	}
	logf("search: retrieval scored (%d queries, %d tools)", len(qs), len(tools))
	if res.budget, err = measureBudget(tools, qs); err != nil {
		return nil, err
	}
	logf("search: budget measured")
	// The real catalog replicated under distinct server names, cut to size.
	res.large = o.searchTools
	large := cat.Replicas(res.large/cat.Len() + 1)[:res.large]
	for _, c := range []struct {
		kind string
		new  func([]tool.Tool) *toolsearch.Index
	}{{"ranker", toolsearch.New}, {"plain BM25", toolsearch.NewBaseline}} {
		for _, set := range [][]tool.Tool{tools, large} {
			res.latency = append(res.latency, measureLatency(c.kind, c.new, set, qs, o.searchPasses))
		}
	}
	logf("search: latency measured")
	return res, nil
}

// measureBudget counts the tokens the model sees of the catalog: search
// off, search on before any search, and after one search_tools call. One
// view serves every query, each search in a fresh session of it (as a
// gateway's client has its own), so the index is built once; each tool's
// tokens are counted once.
func measureBudget(tools []tool.Tool, qs []retrieval.Query) (budgetResults, error) {
	var b budgetResults
	reg := tool.NewRegistry()
	if _, err := reg.Register(tools...); err != nil {
		return b, err
	}
	count := tokenCounter()
	var err error
	off, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOff})
	if err != nil {
		return b, err
	}
	defer off.Close()
	if b.offTools, b.offTokens, err = visibleCost(off.Tools, count); err != nil {
		return b, err
	}
	off.Close() // one view at a time: each registers its search tool
	on, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOn})
	if err != nil {
		return b, err
	}
	defer on.Close()
	if b.onTools, b.onTokens, err = visibleCost(on.Tools, count); err != nil {
		return b, err
	}
	for _, q := range qs {
		s := on.NewSession()
		args, _ := json.Marshal(map[string]any{"query": q.Text, "limit": toolview.DefaultLimit})
		if res, err := reg.Execute(s.Bind(context.Background()), toolview.SearchName, args); err != nil || res.IsError {
			return b, fmt.Errorf("searching %q: %v %s", q.Text, err, res.Text())
		}
		n, tok, err := visibleCost(s.Tools, count)
		if err != nil {
			return b, err
		}
		b.afterSearch = append(b.afterSearch, float64(tok))
		b.afterTools = append(b.afterTools, float64(n))
	}
	return b, nil
}

// visibleCost returns how many tools list returns and their tokens.
func visibleCost(list func() ([]tool.Tool, error), count func(tool.Tool) (int, error)) (n, tok int, err error) {
	ts, err := list()
	if err != nil {
		return 0, 0, err
	}
	for _, t := range ts {
		c, err := count(t)
		if err != nil {
			return 0, 0, err
		}
		tok += c
	}
	return len(ts), tok, nil
}

// tokenCounter returns tokens.Tool remembering each tool's count by its
// definition.
func tokenCounter() func(tool.Tool) (int, error) {
	seen := map[string]int{}
	return func(t tool.Tool) (int, error) {
		key := t.Name + "\x00" + t.Description + "\x00" + string(t.InputSchema)
		if n, ok := seen[key]; ok {
			return n, nil
		}
		n, err := tokens.Tool(t)
		if err == nil {
			seen[key] = n
		}
		return n, err
	}
}

// measureLatency times building an index of tools and answering every
// query passes times (top 5, what search_tools asks for).
func measureLatency(kind string, build func([]tool.Tool) *toolsearch.Index, tools []tool.Tool, qs []retrieval.Query, passes int) latencyResult {
	r := latencyResult{kind: kind, tools: len(tools)}
	var builds, per []time.Duration
	var idx *toolsearch.Index
	for range max(passes/4, 3) {
		start := time.Now()
		idx = build(tools)
		builds = append(builds, time.Since(start))
	}
	runtime.GC() // the builds' garbage is not the queries' cost
	best := make([]time.Duration, len(qs))
	for p := range passes {
		for i, q := range qs {
			start := time.Now()
			idx.Search(q.Text, toolview.DefaultLimit)
			d := time.Since(start)
			per = append(per, d)
			if p == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	r.build, r.p50, r.p99 = medianDur(builds), percentile(per, 50), percentile(per, 99)
	r.slowest = percentile(best, 100)
	return r
}

// searchTables renders the search rows.
func searchTables(o options, r *searchResults) []table {
	return []table{retrievalTable(o, r), budgetTable(o, r), latencyTable(o, r)}
}

func retrievalTable(o options, r *searchResults) table {
	var pkgs []string
	for _, s := range r.cat.Servers {
		pkgs = append(pkgs, s.Package)
	}
	t := table{
		title:   "Tool search: retrieval on real MCP servers' tools",
		command: o.command("search"),
		header: []string{"queries", "n", "recall@1 raw BM25", "recall@1 BM25", "recall@1 ranker", "recall@5 raw BM25", "recall@5 BM25", "recall@5 ranker",
			"MRR@10 raw BM25", "MRR@10 BM25", "MRR@10 ranker"},
		notes: []string{
			fmt.Sprintf("Catalog: testdata/toolcatalog/catalog.json, %d tools of %d servers as they listed them to mcpbridge's client, captured %s by `%s` (Node %s): %s.",
				r.cat.Len(), len(r.cat.Servers), r.cat.Source.Captured, r.cat.Source.Command, r.cat.Source.Node, strings.Join(pkgs, ", ")),
			"Queries: testdata/toolcatalog/queries.tsv, requests written the way users ask, each with the tools that answer it (any one counts); written and committed before the ranker was tuned on them. Tune: may guide changes to the ranker; held: every third query, never tuned on.",
			"Ranker: toolsearch.New (BM25F over name, title, description, parameter names and texts, server name; aliases, phrases, prefix completion, a boost for the tools of a server the request names). BM25: toolsearch.NewBaseline, plain BM25 (k1 1.2, b 0.75) over one bag of words per tool (public name, description, parameter names) with the ranker's word analysis (split at non-alphanumerics and camel case, lower case, English stop words, Snowball stems): the baseline the goal is measured against. Raw BM25: toolsearch.NewRawBaseline, the same BM25 on words as written (lower-cased runs of letters and digits, nothing else), what a retrieval library gives by default.",
			"recall@k: share of queries with an answer among the first k; MRR@10: mean reciprocal rank of the first answer, 0 below rank 10.",
		},
	}
	for _, split := range []string{"", retrieval.Tune, retrieval.Held} {
		s := r.scores[split]
		name := map[string]string{"": "all", retrieval.Tune: "tune", retrieval.Held: "held out"}[split]
		t.rows = append(t.rows, []string{name, strconv.Itoa(s[0].Queries),
			pct(s[2].Recall1), pct(s[1].Recall1), pct(s[0].Recall1), pct(s[2].Recall5), pct(s[1].Recall5), pct(s[0].Recall5),
			fmt.Sprintf("%.3f", s[2].MRR10), fmt.Sprintf("%.3f", s[1].MRR10), fmt.Sprintf("%.3f", s[0].MRR10)})
	}
	return t
}

func budgetTable(o options, r *searchResults) table {
	b := r.budget
	lo, hi := minMax(b.afterSearch)
	after := median(b.afterSearch)
	t := table{
		title:   "Tool search: model-visible tokens of that catalog",
		command: o.command("search"),
		header:  []string{"view", "tools the model sees", "tokens (o200k_base)", "vs search off"},
		notes: []string{
			"Tokens of each tool definition as a chat-completions request carries it (package tokens), summed over toolview.View.Tools(): search off is the whole catalog; search on (mode on, nothing pinned) is search_tools alone, then search_tools plus the 5 tools one search_tools call loaded (median over the queries, [range]).",
			"The search_tools result itself (the 5 definitions, once, as a tool result) is not counted: it is about the size of the 5 tools added.",
		},
	}
	t.rows = append(t.rows,
		[]string{"search off", strconv.Itoa(b.offTools), strconv.Itoa(b.offTokens), "–"},
		[]string{"search on, before any search", strconv.Itoa(b.onTools), strconv.Itoa(b.onTokens), fewer(float64(b.onTokens), float64(b.offTokens))},
		[]string{"search on, after one search (5 loaded)", fmt.Sprintf("%.0f", median(b.afterTools)),
			fmt.Sprintf("%.0f [%.0f–%.0f]", after, lo, hi), fewer(after, float64(b.offTokens))},
	)
	return t
}

func latencyTable(o options, r *searchResults) table {
	t := table{title: "Tool search: latency", command: o.command("search")}
	t.header = []string{"ranking", "tools", "index build (median)", "query p50", "query p99", "slowest query (its best pass)"}
	t.notes = []string{
		fmt.Sprintf("Each query of queries.tsv answered %d times (top 5), one at a time, in this process, after a GC (the index builds' garbage is not the queries' cost). On a shared machine the p99 is mostly the scheduler: a query that is descheduled takes milliseconds, and a slower ranking is caught more often; the slowest query's best pass is the cost of the worst request without that noise. The %d-tool catalog is the real one replicated under distinct server names (github-1, github-2, …), so its words are real and its look-alikes many.", o.searchPasses, o.searchTools),
	}
	for _, l := range r.latency {
		t.rows = append(t.rows, []string{l.kind, strconv.Itoa(l.tools), fmtDur(l.build), fmtDur(l.p50), fmtDur(l.p99), fmtDur(l.slowest)})
	}
	return t
}

// searchTargets are the goals for tool search.
func searchTargets(r *searchResults) [][]string {
	all := r.scores[""] // against the stronger baseline on each measure
	d5 := all[0].Recall5 - max(all[1].Recall5, all[2].Recall5)
	d1 := all[0].Recall1 - max(all[1].Recall1, all[2].Recall1)
	off := float64(r.budget.offTokens)
	cut := 1 - float64(r.budget.onTokens)/off
	var p99 time.Duration
	for _, l := range r.latency {
		if l.kind == "ranker" && l.tools == r.large {
			p99 = l.p99
		}
	}
	return [][]string{
		{"tool search recall@5: ranker ≥ plain BM25 (the better of the two) + 5 points", fmt.Sprintf("%+.1f points", 100*d5), metIf(d5 >= 0.05)},
		{"tool search recall@1: ranker > plain BM25 (the better of the two)", fmt.Sprintf("%+.1f points", 100*d1), metIf(d1 > 0)},
		{"model-visible tokens with search on ≥ 90% fewer", fmt.Sprintf("%.1f%% fewer", 100*cut), metIf(cut >= 0.9)},
		{fmt.Sprintf("search of %d tools in milliseconds (p99 < 10 ms)", r.large), fmtDur(p99), verdict(p99.Seconds(), 0.010)},
	}
}

func metIf(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// fewer renders how much smaller x is than of.
func fewer(x, of float64) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%% fewer", 100*(1-x/of))
}

func minMax(xs []float64) (lo, hi float64) {
	for i, x := range xs {
		if i == 0 || x < lo {
			lo = x
		}
		hi = max(hi, x)
	}
	return lo, hi
}
