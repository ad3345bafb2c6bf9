// Package tokens counts what a tool costs a model's context: the tokens of
// its definition as a chat-completions request carries it, with a real BPE
// tokenizer and nothing fetched at run time.
//
// The encoding is OpenAI's o200k_base (tiktoken-go with its ranks embedded
// by tiktoken-go-loader). DeepSeek's own tokenizer is a HuggingFace
// tokenizer.json with no well-kept Go implementation; o200k_base is the
// newer and larger of the two tiktoken encodings used by current models,
// and on tool definitions (English prose and JSON) its counts stay close
// to DeepSeek V3's (see docs/toolsearch.md for the measured gap). Counts
// are therefore estimates for models other than OpenAI's.
package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Encoding names the BPE encoding every count uses.
const Encoding = "o200k_base"

// encoder loads the embedded ranks once, on first use (about a tenth of
// a second), so that programs which never count pay nothing.
var encoder = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(Encoding)
	if err != nil {
		return nil, fmt.Errorf("tokens: load %s: %w", Encoding, err)
	}
	return enc, nil
})

// Count returns the number of tokens in s; special tokens such as
// <|endoftext|> count as the ordinary text they are in a tool definition.
func Count(s string) (int, error) {
	enc, err := encoder()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, part := range cutRuns(s) {
		n += len(enc.EncodeOrdinary(part))
	}
	return n, nil
}

// maxRun bounds a run of characters of one kind (letters, spaces, or
// punctuation) that is encoded at once. The tokenizer keeps such a run
// as one piece, and BPE's merges take time quadratic in a piece's length:
// 64 KiB of one letter in a hostile server's schema took three seconds,
// a megabyte would take many minutes, under the view's lock. Words and
// JSON never run this long; a run cut in pieces counts within a token of
// the whole.
const maxRun = 256

// cutRuns is s cut where a run of one kind of character reaches maxRun
// bytes; s alone when none does.
func cutRuns(s string) []string {
	var parts []string
	start, run, kind := 0, 0, -1
	for i, r := range s {
		k := charKind(r)
		if k != kind {
			kind, run = k, 0
		}
		if run >= maxRun {
			parts, start, run = append(parts, s[start:i]), i, 0
		}
		run += utf8.RuneLen(r)
	}
	return append(parts, s[start:])
}

// charKind is the kind of character the tokenizer's pieces keep together.
func charKind(r rune) int {
	switch {
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return 0
	case unicode.IsNumber(r):
		return 1
	case unicode.IsSpace(r):
		return 2
	}
	return 3
}

// Tool returns the tokens of t's definition: its Chat form as compact JSON,
// as a request body carries it (encoding/json compacts the schema's bytes
// and leaves <, > and & as they are).
func Tool(t tool.Tool) (int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(chattools.Of(t)); err != nil {
		return 0, fmt.Errorf("tokens: tool %s: %w", t.Name, err)
	}
	return Count(string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))))
}

// Total returns the tokens of every tool's definition, summed.
func Total(tools []tool.Tool) (int, error) {
	sum := 0
	for _, t := range tools {
		n, err := Tool(t)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}
