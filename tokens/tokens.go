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
	return len(enc.EncodeOrdinary(s)), nil
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
