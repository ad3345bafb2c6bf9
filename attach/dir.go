package attach

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
	"github.com/mcpbridge/mcpbridge/internal/dirprune"
)

// Dir is a Store that writes each attachment as a file in a directory,
// named by the SHA-256 of its bytes (so the same image is one file however
// often it comes) with the extension of its media type. The directory is
// created, private to the user, when first needed.
type Dir string

// DefaultDir is the per-user cache directory's mcpbridge folder
// ($XDG_CACHE_HOME/mcpbridge, ~/.cache/mcpbridge, ~/Library/Caches/mcpbridge).
func DefaultDir() (Dir, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory to save attachments in (give --save-dir): %w", err)
	}
	return Dir(filepath.Join(cache, "mcpbridge")), nil
}

// Put writes a to the directory, unless a file of that name (the same
// bytes) is already there, and returns its path. The file appears whole
// or not at all (atomicfile), readable by the user only.
func (d Dir) Put(_ context.Context, a Attachment) (string, error) {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256(a.Data)
	path := filepath.Join(string(d), hex.EncodeToString(sum[:16])+extension(a.MediaType))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := atomicfile.Write(path, a.Data, 0o600); err != nil {
		return path, err
	}
	d.prune(path)
	return path, nil
}

// MaxKept bounds the attachments a Dir keeps: past it, the oldest go
// (a screenshot tool called in a loop would fill the disk otherwise).
const MaxKept = 512

// prune removes the oldest attachments past MaxKept, never kept (the one
// just written, whatever a coarse clock says of its time). Only
// attachments go: the files named by a hash at the directory's top, not
// what else the cache holds.
func (d Dir) prune(kept string) {
	dirprune.Prune(string(d), MaxKept-1, func(name string) bool {
		return name != filepath.Base(kept) && isAttachmentName(name)
	})
}

// isAttachmentName reports a name Put gives: 32 hex digits and an
// extension.
func isAttachmentName(name string) bool {
	stem, _, ok := strings.Cut(name, ".")
	if !ok || len(stem) != 32 {
		return false
	}
	_, err := hex.DecodeString(stem)
	return err == nil
}

// extensions of the media types MCP servers send; others ask the mime
// package, else ".bin".
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/svg+xml": ".svg",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg", "audio/webm": ".webm",
	"audio/flac": ".flac", "audio/mp4": ".m4a", "audio/aac": ".aac",
}

func extension(mediaType string) string {
	mt, _, _ := mime.ParseMediaType(mediaType)
	mt = strings.ToLower(mt)
	if ext, ok := extensions[mt]; ok {
		return ext
	}
	if !strings.HasPrefix(mt, "image/") && !strings.HasPrefix(mt, "audio/") {
		return ".bin" // a server's text/html is not saved as a page to open
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}
