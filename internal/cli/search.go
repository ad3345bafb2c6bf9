package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// defaultSearchLimit is how many tools search shows without --limit.
const defaultSearchLimit = 5

// maxQueryBytes bounds one query line of `search -`.
const maxQueryBytes = 64 << 10

// search ranks the tools of the started servers for a request in plain
// language and prints the best first: `search [SOURCE] [--json] [--limit K]
// QUERY`, or with QUERY "-" one query per line of stdin, one line of
// output per query, the servers started once.
func (e *env) search(ctx context.Context, argv []string) error {
	limit, argv, err := cutLimit(argv)
	if err != nil {
		return err
	}
	return e.withBridge(ctx, "search", argv, func(b *bridge, f *flags) error {
		query, fromStdin, err := searchQuery(f.args)
		if err != nil {
			return err
		}
		if fromStdin {
			return e.searchLines(ctx, b.reg, limit, f.json)
		}
		return e.printMatches(toolsearch.New(b.reg.List()).Search(query, limit), f.json)
	})
}

// searchQuery is the QUERY of search: its words joined by spaces (so it
// needs no quotes), or stdin for a lone "-".
func searchQuery(args []string) (query string, fromStdin bool, err error) {
	switch {
	case len(args) == 0:
		return "", false, usagef("search: want QUERY (or - to read one query per line from stdin)")
	case len(args) == 1 && args[0] == "-":
		return "", true, nil
	}
	return strings.Join(args, " "), false, nil
}

// cutLimit takes --limit K (--limit=K, -limit K) out of argv, before the
// flag parser shared with the other commands sees the rest, and returns K:
// defaultSearchLimit when absent, the last one when repeated. K must be a
// whole number ≥ 1. Arguments after "--" are left alone.
func cutLimit(argv []string) (int, []string, error) {
	limit := defaultSearchLimit
	rest := make([]string, 0, len(argv))
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			rest = append(rest, argv[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "limit" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(argv) {
				return 0, nil, usagef("search: flag --limit needs a value")
			}
			i++
			value = argv[i]
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return 0, nil, usagef("search: --limit must be a whole number of at least 1, got %q", value)
		}
		limit = n
	}
	return limit, rest, nil
}

// printMatches prints the result of one query: a table of name, score and
// the first line of the description, or with asJSON an indented array of
// {"name","score","description"}.
func (e *env) printMatches(ms []toolsearch.Match, asJSON bool) error {
	if asJSON {
		return writeJSON(e.Stdout, rounded(ms))
	}
	if len(ms) == 0 {
		fmt.Fprintln(e.Stderr, "no tool matches")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%.2f\t%s\n", termsafe.Line(m.Name), m.Score, termsafe.Summary(m.Description))
	}
	return tw.Flush()
}

// searchLines answers one query per line of stdin with one line of
// output: the names of the best tools separated by spaces, or with asJSON
// a compact array as printMatches prints it. An empty line (or one of
// stop words) answers with an empty line, or [], so that the answers
// stay in step with the queries. Each answer is written before the next
// line is read, so a harness can converse through pipes; the index is
// rebuilt when the registry changed since the last query (a server's
// tools/list_changed).
func (e *env) searchLines(ctx context.Context, reg *tool.Registry, limit int, asJSON bool) error {
	lines, errc, stop := e.readLines()
	defer stop()
	var idx *toolsearch.Index
	version := uint64(0)
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			return <-errc
		}
		if v := reg.Version(); idx == nil || v != version {
			idx, version = toolsearch.New(reg.List()), v
		}
		if err := e.printLine(idx.Search(line, limit), asJSON); err != nil {
			return err
		}
	}
}

// readLines reads stdin line by line on a goroutine, so that an interrupt
// ends search while a read waits for the next line. The goroutine sends
// each line on lines, then the reading error (nil at the end of input) on
// errc, and closes lines. stop tells it to send no more. A read cannot be
// interrupted: after stop, the goroutine ends when its read returns, which
// for a terminal or a pipe that stays open may be when the process exits.
func (e *env) readLines() (lines <-chan string, errc <-chan error, stop func()) {
	out := make(chan string)
	errs := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(out)
		sc := bufio.NewScanner(e.Stdin)
		sc.Buffer(make([]byte, 0, 4096), maxQueryBytes)
		for sc.Scan() {
			select {
			case out <- sc.Text():
			case <-done:
				return
			}
		}
		switch err := sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			errs <- usagef("search: a query line is longer than %d bytes", maxQueryBytes)
		case err != nil:
			errs <- fmt.Errorf("search: reading queries from stdin: %w", err)
		default:
			errs <- nil
		}
	}()
	return out, errs, func() { close(done) }
}

// printLine prints the answer to one query of searchLines.
func (e *env) printLine(ms []toolsearch.Match, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(rounded(ms))
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = termsafe.Line(m.Name)
	}
	_, err := fmt.Fprintln(e.Stdout, strings.Join(names, " "))
	return err
}

// rounded returns ms with scores to three decimals (more digits say
// nothing a reader can use), and an empty array rather than null.
func rounded(ms []toolsearch.Match) []toolsearch.Match {
	out := make([]toolsearch.Match, len(ms))
	for i, m := range ms {
		m.Score = math.Round(m.Score*1000) / 1000
		out[i] = m
	}
	return out
}
