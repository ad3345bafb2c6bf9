// Package attach keeps the images and audio of tool results somewhere a
// person (or a harness) can reach them, and names each in the result's
// text. The projection a model sees (docs/upstream.md §4.7) has no
// attachment store, so an image there is a diagnostic; a harness that has
// one plugs it in as a Store, and Text gives the result's text with each
// image and audio block stored and referenced in place.
//
// Only the text changes: the result's value (the raw MCP blocks, base64
// and all) is left as it was, so the gateway, which serves raw blocks, and
// `call --json` are untouched.
package attach

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Attachment is one image or audio block of a result, decoded.
type Attachment struct {
	Kind      string // "image" or "audio"
	MediaType string // as the server declared it
	Data      []byte
}

// Store keeps attachments. Put returns where the attachment can be found
// (a path, a URL, an id), which the text shows; it may be called
// concurrently.
type Store interface {
	Put(ctx context.Context, a Attachment) (string, error)
}

// Text returns the text of res with every image and audio block of its
// value stored in s: each block's diagnostic becomes
// "[image saved: PATH (image/png, 1.2 KB)]". A block that cannot be stored
// (or decoded) says why instead ("[image not saved: image/png; …]"); an
// image the projection refused (a malformed one, or one in an error
// result) keeps its diagnostic. A failed result is returned as it is.
func Text(ctx context.Context, s Store, res tool.Result) string {
	text := res.Text()
	if res.IsError || len(res.Value) == 0 {
		return text
	}
	var value struct {
		Content []json.RawMessage `json:"content"`
	}
	if json.Unmarshal(res.Value, &value) != nil {
		return text
	}
	var b strings.Builder
	for _, raw := range value.Content {
		blk, ok := media(raw)
		if !ok {
			continue
		}
		diag := diagnostic(blk.Type, blk.MimeType)
		i := strings.Index(text, diag)
		if i < 0 {
			continue // refused by the projection: its own diagnostic stays
		}
		b.WriteString(text[:i])
		b.WriteString(store(ctx, s, blk.Type, blk.MimeType, blk.Data))
		text = text[i+len(diag):]
	}
	b.WriteString(text)
	return b.String()
}

// mediaBlock is the part of an image or audio block Text and Blocks read.
type mediaBlock struct {
	Type     string `json:"type"`
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// media decodes raw as an image or audio block; false for any other.
func media(raw json.RawMessage) (mediaBlock, bool) {
	var blk mediaBlock
	if json.Unmarshal(raw, &blk) != nil || blk.Type != "image" && blk.Type != "audio" {
		return blk, false
	}
	return blk, true
}

// diagnostic is the text the projection gives a valid image or an audio
// block when no attachment store is mounted (docs/upstream.md §4.6, §4.7).
func diagnostic(kind, mediaType string) string {
	if kind == "audio" {
		return "[audio result unsupported: " + mediaType + "; raw audio data remains available to programmatic callers]"
	}
	return "[image unavailable: " + mediaType + "; no attachment store is mounted; raw image data remains available to programmatic callers]"
}

// store puts one block in s and says where it went.
func store(ctx context.Context, s Store, kind, mediaType, data string) string {
	where, n, err := put(ctx, s, kind, mediaType, data)
	if err != nil {
		return fmt.Sprintf("[%s not saved: %s; %v]", kind, mediaType, err)
	}
	return fmt.Sprintf("[%s saved: %s (%s, %s)]", kind, where, mediaType, Size(n))
}

// put decodes one block's base64 data and puts it in s: where it went
// and its size.
func put(ctx context.Context, s Store, kind, mediaType, data string) (string, int, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return "", 0, errors.New("the data is not base64")
	}
	where, err := s.Put(ctx, Attachment{Kind: kind, MediaType: mediaType, Data: raw})
	return where, len(raw), err
}

// Blocks returns content, a JSON array of MCP content blocks, with every
// image and audio block stored in s and its data replaced by where it
// went: {"type": "image", "mimeType": "image/png", "saved": PATH}, or
// "notSaved": why, when it could not be stored. For a program that reads
// a result's blocks (code mode) and should pass on a path, not kilobytes
// of base64. Other blocks, and content that is not an array, are kept as
// they are.
func Blocks(ctx context.Context, s Store, content json.RawMessage) json.RawMessage {
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil {
		return content
	}
	changed := false
	for i, raw := range blocks {
		blk, ok := media(raw)
		if !ok {
			continue
		}
		out := map[string]string{"type": blk.Type, "mimeType": blk.MimeType}
		if where, _, err := put(ctx, s, blk.Type, blk.MimeType, blk.Data); err != nil {
			out["notSaved"] = err.Error()
		} else {
			out["saved"] = where
		}
		blocks[i], _ = json.Marshal(out) // strings: cannot fail
		changed = true
	}
	if !changed {
		return content
	}
	b, _ := json.Marshal(blocks) // valid blocks: cannot fail
	return b
}

// Size writes a byte count as a person reads it: 95 B, 1.2 KB, 3.4 MB
// (powers of 1024).
func Size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}
