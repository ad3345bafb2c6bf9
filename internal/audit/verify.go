package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Report is what Verify found.
type Report struct {
	// Lines is the number of entries checked.
	Lines int
	// Torn counts the lines skipped as cut short by a crash or a failed
	// write (a full disk): a last line without its newline, or one a
	// later line ended.
	Torn int
	// Start is the first entry's prev: Genesis for a trail read from its
	// first line, the last hash of the file it continues for one that
	// continues a rotated file.
	Start string
	// Last is the last entry's hash: the Start of the file that
	// continues this one.
	Last string
	// Fresh names the files, after the first, that begin a chain of
	// their own (their first prev is Genesis): the gateway was started on
	// a new file after the one before was moved away, so nothing ties the
	// end of that one to them.
	Fresh []string
}

// BrokenError says which line breaks the chain.
type BrokenError struct {
	File string // "" for a trail read from a reader
	Line int
	Msg  string
}

func (e *BrokenError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ErrNoEntries is Verify's error for a trail without one entry.
var ErrNoEntries = errors.New("no audit entry in it: not an audit trail, or one no call was written to yet")

// Verify reads an audit trail from its first line and checks that every
// entry's prev is the hash of the entry before it, the first one's
// Genesis. A line cut short by a crash or a failed write is skipped; the
// chain continues over it, so a line replaced by garbage is still found
// by the next entry's prev. A trail without an entry fails
// (ErrNoEntries).
func Verify(r io.Reader) (Report, error) {
	c := Chain{From: Genesis}
	if err := c.whole("", r); err != nil {
		return c.Report, err
	}
	return c.Report, c.done()
}

// VerifyFiles verifies the files of one trail as Verify does, oldest
// first (a rotated trail's: audit.jsonl.1, then audit.jsonl), as one
// chain whose first entry's prev is from: Genesis for a trail kept from
// its first line, or the Last of a file no longer there.
func VerifyFiles(from string, paths ...string) (Report, error) {
	c := Chain{From: from}
	for _, p := range paths {
		if err := c.readFile(p); err != nil {
			return c.Report, err
		}
	}
	return c.Report, c.done()
}

func (c *Chain) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.whole(path, f)
}

// whole verifies r, all of the file called name, after the files before
// it.
func (c *Chain) whole(name string, r io.Reader) error {
	c.next(name)
	tail, err := c.Continue(r)
	if tail > 0 {
		c.Torn++
	}
	return err
}

// done is the error of a verification that read every file.
func (c *Chain) done() error {
	if c.Lines == 0 {
		return ErrNoEntries
	}
	return nil
}

// Chain is a verification in progress (Verify's state), so that a trail
// that grows is read once: each Continue reads only what was appended
// since. The zero value starts at the trail's first byte, taking its
// first entry's prev as given (Start tells).
type Chain struct {
	// Offset is how far the trail is verified: the byte after the last
	// complete line read.
	Offset int64
	Report
	// Broken is the first break found; once set, Continue reads nothing.
	Broken *BrokenError
	// From is the prev the first entry must carry: "" takes it as given
	// (a file that may continue a rotated one).
	From string
	file string // the file read, for BrokenError
	line int    // its lines read
	seam bool   // no entry read yet in this file, after an earlier one
}

// next starts the file called name, read after the ones before it.
func (c *Chain) next(name string) {
	c.file, c.line, c.Offset, c.seam = name, 0, 0, c.Lines > 0
}

// Continue verifies r, the trail's bytes from c.Offset on, as Verify
// does, and advances c over every complete line. A last line without its
// newline is left unread (it may be a write still in progress): tail is
// its length, counted torn by Verify and read again by the next Continue.
// The error is c.Broken, or why r could not be read.
func (c *Chain) Continue(r io.Reader) (tail int, err error) {
	if c.Broken != nil {
		return 0, c.Broken
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			if isEntry(line) {
				return len(line), nil // a whole entry that lost only its newline
			}
			return len(line), c.torn(c.line+1, line)
		}
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("audit: reading: %w", err)
		}
		c.line++
		if err := c.entry(line[:len(line)-1]); err != nil {
			return 0, err
		}
		c.Offset += int64(len(line))
	}
}

// entry checks one complete line (without its newline) against the
// chain so far.
func (c *Chain) entry(line []byte) error {
	var e struct {
		Prev *string `json:"prev"`
	}
	if json.Unmarshal(line, &e) != nil || e.Prev == nil {
		if err := c.torn(c.line, line); err != nil {
			return err
		}
		c.Torn++
		return nil
	}
	c.Lines++
	if msg := c.link(*e.Prev); msg != "" {
		return c.broken(c.line, msg)
	}
	c.Last = hashOf(line)
	return nil
}

// link checks an entry's prev against the chain so far: what breaks it,
// "" when nothing does.
func (c *Chain) link(prev string) string {
	seam := c.seam
	c.seam = false
	switch {
	case c.Lines == 1:
		c.Start = prev
		if c.From == Genesis && prev != Genesis {
			return "the trail begins mid-chain (its first entry's prev is not " + Genesis[:8] + "…, a chain's start): lines were removed from its start, or it continues a rotated file: give that file before it, or its last entry's hash as --after"
		}
		if c.From != "" && prev != c.From {
			return "its prev is not the hash the trail was to continue (" + c.From + "): lines were removed from its start, or the hash is another file's"
		}
	case seam && prev == Genesis:
		c.Fresh = append(c.Fresh, c.file)
	case seam && prev != c.Last:
		return "it does not continue the last entry of the file before it: entries were removed from the end of that one or the start of this one, or a file between them is missing"
	case prev != c.Last:
		return "its prev is not the hash of the entry before it: an entry was edited, removed or inserted"
	}
	return ""
}

// torn checks a line that is no entry, line n: a crash or a failed write
// (a full disk) cuts an entry short of valid JSON; anything else was put
// there.
func (c *Chain) torn(n int, line []byte) error {
	switch {
	case json.Valid(line):
		return c.broken(n, "it is JSON but no chained entry (no prev): a line was inserted")
	case !cutShort(line):
		return c.broken(n, "it is not an audit entry, nor one cut short by a crash or a full disk: a line was put there, or this is not an audit trail")
	}
	return nil
}

func (c *Chain) broken(n int, msg string) *BrokenError {
	c.Broken = &BrokenError{File: c.file, Line: n, Msg: msg}
	return c.Broken
}

// entryStart is how every line Write writes begins.
var entryStart = []byte(`{"time":"`)

// cutShort reports whether line can be what a crash or a failed write
// left of an entry: its first bytes, or the zeros a file system puts in
// place of data it had not yet written.
func cutShort(line []byte) bool {
	line = bytes.TrimRight(line, "\x00")
	return bytes.HasPrefix(line, entryStart) || bytes.HasPrefix(entryStart, line)
}
