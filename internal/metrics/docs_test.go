package metrics_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
)

// Every metric a scrape serves is a row of docs/operations.md §3, of the
// type served, and the values its row lists are the ones its help names:
// an operator reading either learns the same labels (the store's and the
// refusals' metrics were documented in §9 and §11 alone, and their help
// named 5 of the store's 11 operations and 2 of the 4 refusal reasons).
func TestMetricsAsDocumented(t *testing.T) {
	m := metrics.New(metrics.Options{
		Servers:        func() []host.Status { return []host.Status{{ID: "a", Name: "a", State: host.StateReady, Tools: 1}} },
		Sessions:       func() int { return 0 },
		ReplicaConfigs: func() int { return 1 },
	})
	m.CallStarted("mcp__a__t")
	m.Refused("denied")
	m.StoreCall("ping", nil)
	m.StoreFallback()
	rows := docRows(t)
	help, types := families(scrapeText(t, m))
	for name, typ := range types {
		row, ok := rows[name]
		if !ok {
			t.Errorf("%s (%s) is served but has no row in docs/operations.md §3", name, typ)
			continue
		}
		if row[1] != typ {
			t.Errorf("%s is a %s, its row in §3 says %q", name, typ, row[1])
		}
		for _, v := range listed(row[3]) {
			if !strings.Contains(help[name], v) {
				t.Errorf("%s: §3 lists %q, its help does not: %q", name, v, help[name])
			}
		}
	}
	for name := range rows {
		if _, ok := types[name]; !ok {
			t.Errorf("§3 has a row for %s, which no scrape serves", name)
		}
	}
}

// docRows are the rows of §3's table, by metric: its cells.
func docRows(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## 3. Metrics")
	section, _, _ = strings.Cut(section, "## 4.")
	rows := map[string][]string{}
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) == 4 && strings.HasPrefix(cells[0], "`mcpbridge_") {
			rows[strings.Trim(cells[0], "`")] = cells
		}
	}
	return rows
}

// families are a scrape's mcpbridge_ metrics: their help and their type.
func families(text string) (help, types map[string]string) {
	help, types = map[string]string{}, map[string]string{}
	for line := range strings.Lines(text) {
		f := strings.SplitN(strings.TrimSpace(line), " ", 4)
		if len(f) < 4 || !strings.HasPrefix(f[2], "mcpbridge_") {
			continue
		}
		switch f[1] {
		case "HELP":
			help[f[2]] = f[3]
		case "TYPE":
			types[f[2]] = f[3]
		}
	}
	return help, types
}

// valueList is a row's list of a label's values: "`op`: `ping`, `take`".
var valueList = regexp.MustCompile("`[a-z_]+`: ((?:`[a-z_]+`(?:, |;| or | and )?)+)")

// listed are the label values a row's description enumerates.
func listed(what string) []string {
	var out []string
	for _, m := range valueList.FindAllStringSubmatch(what, -1) {
		for _, v := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
			out = append(out, v[1])
		}
	}
	return out
}
