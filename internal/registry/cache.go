package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
	"github.com/mcpbridge/mcpbridge/internal/dirprune"
)

// DefaultCacheEntries bounds a Cache whose MaxEntries is 0.
const DefaultCacheEntries = 64

// maxCachedBody is the largest answer kept: a search page, a server.json.
const maxCachedBody = 1 << 20

// Cache keeps registry answers on disk with their ETag, one file each,
// so that a repeated request is revalidated (If-None-Match) rather than
// downloaded again. It holds at most MaxEntries answers, the least
// recently written going first. A cache that cannot be read or written is
// no cache: errors are never the caller's. Safe for concurrent use.
type Cache struct {
	// Dir holds the entries, created when missing (0700).
	Dir string
	// MaxEntries bounds the number of answers kept; 0 means
	// DefaultCacheEntries.
	MaxEntries int

	mu sync.Mutex
}

// cacheEntry is one answer kept.
type cacheEntry struct {
	URL  string          `json:"url"`
	ETag string          `json:"etag"`
	Body json.RawMessage `json:"body"`
}

func (c *Cache) file(u string) string {
	sum := sha256.Sum256([]byte(u))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".json")
}

// get returns the answer kept for u, if any.
func (c *Cache) get(u string) (cacheEntry, bool) {
	if c == nil || c.Dir == "" {
		return cacheEntry{}, false
	}
	data, err := os.ReadFile(c.file(u))
	if err != nil {
		return cacheEntry{}, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.URL != u {
		return cacheEntry{}, false
	}
	return e, true
}

// put keeps the answer to u, then drops the oldest beyond the bound.
func (c *Cache) put(u, etag string, body []byte) {
	if c == nil || c.Dir == "" || len(body) > maxCachedBody || !json.Valid(body) {
		return
	}
	data, err := json.Marshal(cacheEntry{URL: u, ETag: etag, Body: body})
	if err != nil {
		return // untested: body is valid JSON
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if os.MkdirAll(c.Dir, 0o700) != nil || atomicfile.Write(c.file(u), data, 0o600) != nil {
		return
	}
	c.trim()
}

// trim removes the least recently written entries beyond MaxEntries.
func (c *Cache) trim() {
	max := c.MaxEntries
	if max <= 0 {
		max = DefaultCacheEntries
	}
	dirprune.Prune(c.Dir, max, func(name string) bool { return strings.HasSuffix(name, ".json") })
}
