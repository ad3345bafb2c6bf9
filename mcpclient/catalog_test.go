package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// byteCounter counts the bytes the client has read off a pipe (an
// io.Pipe write returns only once read).
type byteCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (c byteCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// countingPipe is rawPipe counting the bytes the client read from raw.
func countingPipe(t *testing.T, raw *mcppeer.RawServer, read *atomic.Int64) func() (mcp.Transport, error) {
	return func() (mcp.Transport, error) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			raw.Serve(context.Background(), sr, byteCounter{sw, read})
			sw.Close()
		}()
		t.Cleanup(func() {
			cw.Close()
			sr.Close()
			<-done
		})
		return &mcp.IOTransport{Reader: cr, Writer: cw, MaxLineLength: 4 << 20}, nil
	}
}

// bigPages is n pages of one tool each with a description of size bytes.
func bigPages(n, size int) []mcppeer.RawPage {
	desc := strings.Repeat("d", size)
	pages := make([]mcppeer.RawPage, n)
	for i := range pages {
		pages[i] = mcppeer.RawPage{Tools: []json.RawMessage{mcppeer.RawTool("big"+string(rune('a'+i%26))+strings.Repeat("x", i/26), desc)}}
	}
	return pages
}

// A server's catalog is bounded as a whole: discovery stops reading once
// the pages pass MaxCatalogBytes, fails naming the limit, and a failed
// re-sync leaves the previous tools registered.
func TestCatalogBytesCap(t *testing.T) {
	const limit = 4 << 20
	var read atomic.Int64
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: onePage(mcppeer.RawTool("small", "s"))})
	h := mustStart(t, stdioConfig("cat"), Options{MaxCatalogBytes: limit, NewTransport: countingPipe(t, raw, &read)})
	if got := h.names(); !slices.Equal(got, []string{"mcp__cat__small"}) {
		t.Fatalf("first catalog: %v", got)
	}

	// 60 pages of one tool with a 1 MiB description: 60 MiB on offer.
	before := read.Load()
	raw.SetScript(mcppeer.RawScript{Pages: bigPages(60, 1<<20)})
	if err := raw.NotifyToolsChanged(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed re-sync", func() bool { return h.log.HasRecord(slog.LevelError, "tool re-sync failed") })
	got := read.Load() - before
	t.Logf("re-sync read %d bytes of the 60 MiB on offer (limit %d)", got, limit)
	if got > limit+2<<20 {
		t.Errorf("re-sync read %d bytes, want at most the limit plus one page", got)
	}
	if !strings.Contains(h.log.Text(), "catalog limit of 4194304 bytes (MaxCatalogBytes)") {
		t.Errorf("the error does not name the limit:\n%.2000s", h.log.Text())
	}
	if got := h.names(); !slices.Equal(got, []string{"mcp__cat__small"}) {
		t.Errorf("after the failed re-sync: %v, want the previous tools", got)
	}

	// A first discovery over the limit fails the start, naming the limit.
	raw2 := mcppeer.NewRawServer(mcppeer.RawScript{Pages: bigPages(60, 1<<20)})
	var read2 atomic.Int64
	_, err := start(t, stdioConfig("cat2"), Options{MaxCatalogBytes: limit, NewTransport: countingPipe(t, raw2, &read2)})
	if err == nil || !strings.Contains(err.Error(), "MaxCatalogBytes") {
		t.Errorf("start over the limit: %v", err)
	}
	if n := read2.Load(); n > limit+2<<20 {
		t.Errorf("first discovery read %d bytes", n)
	}
}

// One tool's description is truncated at MaxDescriptionBytes with a marker;
// a tool whose schema is over MaxSchemaBytes is dropped; both are logged.
func TestToolSizeBounds(t *testing.T) {
	bigSchema, _ := json.Marshal(map[string]any{
		"name":        "bigschema",
		"inputSchema": map[string]any{"type": "object", "description": strings.Repeat("s", MaxSchemaBytes)},
	})
	long := strings.Repeat("é", MaxDescriptionBytes) // 2 bytes a rune
	// Bytes that are not UTF-8 in a schema would reach every model request
	// as they are (a name or description is repaired when decoded, a schema
	// is kept raw): the tool is dropped; in _meta, the _meta is.
	notUTF8 := json.RawMessage("{\"name\":\"badschema\",\"inputSchema\":{\"type\":\"object\",\"description\":\"\xff\"}}")
	badMeta := json.RawMessage("{\"name\":\"badmeta\",\"inputSchema\":{\"type\":\"object\"},\"_meta\":{\"k\":\"\xfe\"}}")
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: onePage(
		mcppeer.RawTool("long", long), json.RawMessage(bigSchema), notUTF8, badMeta, mcppeer.RawTool("ok", "fine"))})
	var read atomic.Int64
	h := mustStart(t, stdioConfig("b"), Options{NewTransport: countingPipe(t, raw, &read)})
	if got := h.names(); !slices.Equal(got, []string{"mcp__b__badmeta", "mcp__b__long", "mcp__b__ok"}) {
		t.Fatalf("tools: %v", got)
	}
	for _, tl := range h.reg.List() {
		if !utf8.Valid(tl.InputSchema) || !utf8.Valid(tl.Meta) {
			t.Errorf("tool %s keeps bytes that are not UTF-8: %q %q", tl.Name, tl.InputSchema, tl.Meta)
		}
	}
	if !h.log.HasRecord(slog.LevelWarn, "tool ignored: schema is not valid UTF-8", "tool", "badschema") {
		t.Errorf("no record of the tool dropped:\n%.2000s", h.log.Text())
	}
	for _, tl := range h.reg.List() {
		if tl.Name != "mcp__b__long" {
			continue
		}
		if len(tl.Description) > MaxDescriptionBytes || !strings.HasSuffix(tl.Description, DescriptionTruncatedMarker) || !strings.HasPrefix(tl.Description, "éé") {
			t.Errorf("description: %d bytes, ends %q", len(tl.Description), tl.Description[max(0, len(tl.Description)-60):])
		}
		if !utf8.ValidString(tl.Description) {
			t.Error("truncated description is not valid UTF-8")
		}
	}
	if !h.log.HasRecord(slog.LevelWarn, "tool ignored: schema too large", "tool", "bigschema") {
		t.Errorf("no drop record:\n%.2000s", h.log.Text())
	}
	if !h.log.HasRecord(slog.LevelWarn, "tool description truncated", "tool", "long") {
		t.Errorf("no truncation record:\n%.2000s", h.log.Text())
	}
}

// A server's tools are bounded in number: a discovery listing more than
// MaxTools fails with an error naming the server and the limit, and a
// failed re-sync leaves the previous tools registered.
func TestToolCountCap(t *testing.T) {
	page := func(n int) []mcppeer.RawPage {
		tools := make([]json.RawMessage, n)
		for i := range tools {
			tools[i] = mcppeer.RawTool("t"+strconv.Itoa(i), "d")
		}
		return []mcppeer.RawPage{{Tools: tools[:n/2]}, {Tools: tools[n/2:]}}
	}
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Pages: page(4)})
	var read atomic.Int64
	h := mustStart(t, stdioConfig("few"), Options{MaxTools: 4, NewTransport: countingPipe(t, raw, &read)})
	if got := len(h.names()); got != 4 {
		t.Fatalf("at the limit: %d tools", got)
	}
	raw.SetScript(mcppeer.RawScript{Pages: page(6)})
	if err := raw.NotifyToolsChanged(); err != nil {
		t.Fatal(err)
	}
	const want = "mcp-client(few): the server lists more than 4 tools, the bridge's limit per server (MaxTools)"
	waitFor(t, "the failed re-sync", func() bool { return strings.Contains(h.log.Text(), want) })
	if got := len(h.names()); got != 4 {
		t.Errorf("after the failed re-sync: %d tools, want the previous 4", got)
	}
}
