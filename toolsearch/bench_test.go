package toolsearch

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// synthetic returns n made-up tools that look like a large bridged
// catalog: names verb_noun[_noun] on one of n/25 servers, descriptions of
// 15 to 60 words drawn from tool vocabulary and a long Zipf-distributed
// tail, and 1 to 6 described parameters. The same n gives the same tools.
func synthetic(n int) []tool.Tool {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	verbs := strings.Fields("get list create update delete search find read write run send post fetch add remove " +
		"open close merge move copy upload download query describe start stop deploy sync export import")
	nouns := strings.Fields("issue file directory repository branch commit message channel user page screenshot " +
		"table record document project task event invoice customer order payment ticket alert metric log " +
		"bucket object cluster pod service secret database index image video comment label release build job")
	common := append(append(strings.Fields("the a of to in for with from and or by on this that returns optional "+
		"specified given new existing all each current list id name url path content text value"), verbs...), nouns...)
	tail := pseudoWords(20000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(tail)-1))
	word := func() string {
		if r.IntN(3) == 0 {
			return common[r.IntN(len(common))]
		}
		return tail[zipf.Uint64()]
	}
	sentence := func(words int) string {
		ws := make([]string, words)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	servers := max(n/25, 1)
	tools := make([]tool.Tool, n)
	for i := range tools {
		server := fmt.Sprintf("srv%d", i%servers)
		raw := fmt.Sprintf("%s_%s_%d", verbs[r.IntN(len(verbs))], nouns[r.IntN(len(nouns))], i)
		if r.IntN(2) == 0 {
			raw = fmt.Sprintf("%s_%s", raw, nouns[r.IntN(len(nouns))])
		}
		props := map[string]any{}
		for range 1 + r.IntN(6) {
			props[nouns[r.IntN(len(nouns))]+"_"+word()] = map[string]any{"type": "string", "description": sentence(4 + r.IntN(8))}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		tools[i] = tool.Tool{
			Name:        "mcp__" + server + "__" + raw,
			Description: sentence(15 + r.IntN(46)),
			InputSchema: schema,
			Origin:      tool.Origin{Server: server, Name: raw},
		}
	}
	return tools
}

// pseudoWords returns n distinct made-up English-looking words with
// English endings, so that stemming them costs what stemming real words
// costs.
func pseudoWords(n int) []string {
	r := rand.New(rand.NewPCG(2, 2))
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br cl dr fl gr pl pr sc st tr")
	vowels := strings.Fields("a e i o u ai ea io ou")
	endings := strings.Fields("s es ed ing er ation ment ness ly able ize ful ive al ity ies")
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		b.WriteString(onsets[r.IntN(len(onsets))])
		if r.IntN(2) == 0 {
			b.WriteString(endings[r.IntN(len(endings))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// benchQueries mix common and rare words, aliases and completions.
var benchQueries = []string{
	"create a new issue in the repository",
	"fetch the contents of a file",
	"list all open tickets for the customer",
	"send a message to the channel",
	"take a screenshot of the page",
	"delete the old pods in the cluster",
	"search invoices by payment",
	"upload an image to the bucket",
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{300, 10000} {
		for _, kind := range []struct {
			name string
			new  func([]tool.Tool) *Index
		}{{"ranker", New}, {"baseline", NewBaseline}} {
			idx := kind.new(synthetic(n))
			b.Run(fmt.Sprintf("%s/tools=%d", kind.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					idx.Search(benchQueries[i%len(benchQueries)], 5)
					i++
				}
			})
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for _, n := range []int{300, 10000} {
		tools := synthetic(n)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				New(tools)
			}
		})
	}
}
