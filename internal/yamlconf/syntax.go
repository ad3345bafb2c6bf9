package yamlconf

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// readerProblems are the messages of yaml.v3's reader, which checks the
// encoding before the scanner sees a character: its errors carry no
// position.
func readerProblems() []string {
	return []string{
		"invalid leading UTF-8 octet",
		"incomplete UTF-8 octet sequence",
		"invalid trailing UTF-8 octet",
		"invalid length of a UTF-8 sequence",
		"invalid Unicode character",
		"control characters are not allowed",
		"incomplete UTF-16 character",
		"unexpected low surrogate area",
		"incomplete UTF-16 surrogate pair",
		"expected low surrogate area",
	}
}

// LocateSyntaxError finds where in data the yaml.v3 error message msg
// (without its "yaml: " prefix) arose, for the errors yaml.v3 reports
// without a line: a character the reader refuses (invalid UTF-8, a control
// character) and an alias of an unknown anchor. line and col are 1-based,
// col counting characters as yaml.v3's node columns do; ok is false when
// msg is not one of those errors or the place cannot be found.
func LocateSyntaxError(data []byte, msg string) (line, col int, ok bool) {
	off := -1
	switch {
	case isReaderProblem(msg) && isUTF16(data):
		return badChar16(data)
	case isReaderProblem(msg):
		off = badChar(data)
	case strings.HasPrefix(msg, "unknown anchor '") && strings.HasSuffix(msg, "' referenced"):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		off = unknownAlias(data, name, msg)
	}
	if off < 0 {
		return 0, 0, false
	}
	line, col = position(data, off)
	return line, col, true
}

// OnFirstLine reports whether the yaml.v3 error message msg (without its
// "yaml: " prefix), given without a "line N: " part, is about the first line
// of the file: yaml.v3 names the line of every scanner and parser error
// except when its marks are on the first line (line 0 to it), so a message
// without one that is neither a reader problem nor an unknown anchor (which
// LocateSyntaxError finds) arose on line 1.
func OnFirstLine(msg string) bool {
	return !isReaderProblem(msg) && !strings.HasPrefix(msg, "unknown anchor '")
}

func isReaderProblem(msg string) bool {
	for _, p := range readerProblems() {
		if msg == p {
			return true
		}
	}
	return false
}

// badChar returns the offset of the first character of data that yaml.v3's
// reader refuses, or -1. Only UTF-8 input is searched: a file with a UTF-16
// byte order mark is read differently (see badChar16).
func badChar(data []byte) int {
	if isUTF16(data) {
		return -1
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || !allowedChar(r) {
			return i
		}
		i += size
	}
	return -1
}

// isUTF16 reports whether data starts with a UTF-16 byte order mark, which
// makes yaml.v3 read it as UTF-16.
func isUTF16(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff})
}

// badChar16 is badChar for UTF-16 data (after its byte order mark): the
// line and column of the first character yaml.v3's reader refuses (a lone
// or cut surrogate, a cut code unit, a character YAML does not allow).
func badChar16(data []byte) (line, col int, ok bool) {
	unit := func(i int) rune {
		if data[0] == 0xfe { // big endian
			return rune(data[i])<<8 | rune(data[i+1])
		}
		return rune(data[i+1])<<8 | rune(data[i])
	}
	line, col = 1, 1
	for i := 2; i < len(data); {
		if i+1 >= len(data) {
			return line, col, true // a cut code unit
		}
		r, size := unit(i), 2
		switch {
		case 0xdc00 <= r && r <= 0xdfff:
			return line, col, true
		case 0xd800 <= r && r <= 0xdbff:
			if i+3 >= len(data) {
				return line, col, true
			}
			r2 := unit(i + 2)
			if r2 < 0xdc00 || r2 > 0xdfff {
				return line, col, true
			}
			r, size = 0x10000+(r&0x3ff)<<10+(r2&0x3ff), 4
		}
		if !allowedChar(r) {
			return line, col, true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return 0, 0, false
}

// allowedChar reports whether YAML 1.2 allows r in a stream (the reader's
// check: tab, line breaks, printable characters).
func allowedChar(r rune) bool {
	switch {
	case r == 0x09, r == 0x0a, r == 0x0d, r == 0x85:
		return true
	case 0x20 <= r && r <= 0x7e, 0xa0 <= r && r <= 0xd7ff:
		return true
	case 0xe000 <= r && r <= 0xfffd, 0x10000 <= r && r <= 0x10ffff:
		return true
	}
	return false
}

// unknownAlias returns the offset of the alias *name that made yaml.v3 fail
// with msg, or -1. The text "*name" may also stand in a comment or a quoted
// string, so each candidate is tried: the parser fails at the first real
// alias r, so blanking the candidates from i on makes msg go away exactly
// when i ≤ r. A binary search over i finds r in a few parses.
func unknownAlias(data []byte, name, msg string) int {
	token := []byte("*" + name)
	var cands []int
	for off := 0; ; {
		i := bytes.Index(data[off:], token)
		if i < 0 {
			break
		}
		p := off + i
		if end := p + len(token); aliasEnd(data[end:]) {
			cands = append(cands, p)
		}
		off = p + 1
	}
	gone := func(i int) bool { // blanking cands[i:] removes the error
		b := bytes.Clone(data)
		for _, p := range cands[i:] {
			copy(b[p:], bytes.Repeat([]byte{'_'}, len(token)))
		}
		err := parseAll(b)
		return err == nil || !strings.Contains(err.Error(), msg)
	}
	if len(cands) == 0 || !gone(0) || gone(len(cands)) {
		return -1
	}
	// The largest i with gone(i): gone holds for 0..r and fails after.
	r := sort.Search(len(cands), func(i int) bool { return !gone(i + 1) })
	return cands[r]
}

// aliasEnd reports whether rest, what follows "*name" in the file, can end
// an alias there: yaml.v3 takes the end of the file, a blank or line break,
// or one of ?:,]}%@` (a [ or { is taken too, a "*name" so followed being a
// scanner error that names no anchor).
func aliasEnd(rest []byte) bool {
	if len(rest) == 0 || bytes.IndexByte([]byte(" \t\r\n\x00?:,[]{}%@`"), rest[0]) >= 0 {
		return true
	}
	for _, br := range []string{"\u0085", "\u2028", "\u2029"} {
		if bytes.HasPrefix(rest, []byte(br)) {
			return true
		}
	}
	return false
}

// parseAll parses every document of data and returns the first error.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// position converts a byte offset of data into a 1-based line and
// character column; a UTF-8 byte order mark does not count.
func position(data []byte, off int) (line, col int) {
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	start := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(data[start:off])
	if start == 0 && bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		col--
	}
	return line, col
}
