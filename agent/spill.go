package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tokens"
)

// capResult cuts text to the token cap. The whole text goes to a file in
// SpillDir, named after the call, and the model is told where and how
// much was left out; spilled is the file ("" when nothing was cut or no
// file could be written, which the note then says).
func (a *Agent) capResult(c Call, text string) (out, spilled string) {
	limit := a.opts.ResultTokens
	if limit <= 0 {
		limit = DefaultResultTokens
	}
	// A token is never shorter than one byte: shorter texts are under the
	// cap without counting.
	if len(text) <= limit {
		return text, ""
	}
	n, err := tokens.Count(text)
	if err != nil || n <= limit {
		return text, ""
	}
	head := cut(text, limit, n)
	where := "it could not be kept"
	if path, err := a.spill(c, text); err == nil {
		spilled, where = path, "the whole result is in the file "+path
	} else {
		where += " (" + err.Error() + ")"
	}
	note := fmt.Sprintf("\n\n[mcpbridge: result cut at %d of its %d tokens (%d bytes); %s. Read parts of it with a file tool if you need more.]",
		limit, n, len(text), where)
	return head + note, spilled
}

// cut returns the longest start of text found within limit tokens: first
// in proportion to its n tokens, then shortened by a tenth until it fits.
func cut(text string, limit, n int) string {
	end := len(text) * limit / n
	for {
		head := textcut.Prefix(text, end)
		end = len(head)
		if c, err := tokens.Count(head); err != nil || c <= limit {
			return head
		}
		end -= max(end/10, 1)
	}
}

// maxSpillName bounds the bytes of a spilled result's file name taken
// from its call: a model may give an id of any length.
const maxSpillName = 120

// spill writes text to a new file of SpillDir named after the call and
// returns its path. Ids are the model's: one may come twice, and each
// result keeps a file of its own.
func (a *Agent) spill(c Call, text string) (string, error) {
	if a.opts.SpillDir == "" {
		return "", fmt.Errorf("no directory for results")
	}
	if err := os.MkdirAll(a.opts.SpillDir, 0o700); err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, c.Name+"-"+c.ID)
	base := filepath.Join(a.opts.SpillDir, textcut.Prefix(name, maxSpillName))
	for n := 1; ; n++ {
		path := base + ".txt"
		if n > 1 {
			path = fmt.Sprintf("%s-%d.txt", base, n)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", err
		}
		return path, nil
	}
}
