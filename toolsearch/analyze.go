package toolsearch

import (
	"strings"
	"unicode"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// analyzer turns text into index terms: words split at anything that is
// not a letter or digit and at camel-case humps, lower-cased, stop words
// dropped, stemmed (Snowball English, the Porter2 stemmer). The same
// analyzer settings must serve an index and its queries. An analyzer is
// not safe for concurrent use (its cache).
type analyzer struct {
	// raw keeps words as written, lower-cased: no camel-case split, stop
	// words or stems (NewRawBaseline's textbook BM25).
	raw bool
	// camel is what becomes of a word written in camel case.
	camel camelMode
	// phrases joins the word pairs of phraseTerms ("pull request" becomes
	// "pr") before stop words are dropped.
	phrases bool
	// cache remembers what each word became while an index is built, where
	// the same few thousand words recur across thousands of tools; nil
	// disables it.
	cache map[string]wordInfo
	words []string // scratch for split words
}

// wordInfo is what the analyzer makes of one lower-case word.
type wordInfo struct {
	term        string // "" for a word without meaning
	phraseStart bool   // the first word of a phraseTerms pair
}

// appendTerms appends the terms of s to dst.
func (a *analyzer) appendTerms(dst []string, s string) []string {
	if a.raw {
		for _, w := range strings.FieldsFunc(s, notAlnum) {
			dst = append(dst, strings.ToLower(w))
		}
		return dst
	}
	a.words = a.split(a.words[:0], s)
	words := a.words
	for i := 0; i < len(words); i++ {
		w := a.info(words[i])
		if w.phraseStart && a.phrases && i+1 < len(words) {
			if p, ok := phraseTerms[[2]string{words[i], words[i+1]}]; ok {
				dst = append(dst, a.term(p))
				i++
				continue
			}
		}
		if w.term != "" {
			dst = append(dst, w.term)
		}
	}
	return dst
}

func (a *analyzer) info(w string) wordInfo {
	if info, ok := a.cache[w]; ok {
		return info
	}
	_, start := phraseStarts[w]
	info := wordInfo{term: a.term(w), phraseStart: start}
	if a.cache != nil {
		a.cache[w] = info
	}
	return info
}

// term is the index term of one lower-case word, or "" for a word that
// carries no meaning (a stop word, a single letter).
func (a *analyzer) term(w string) string {
	if len(w) < 2 {
		return ""
	}
	if _, stop := stopWords[w]; stop {
		return ""
	}
	if t, ok := wordTerms[w]; ok {
		return t
	}
	return stem(w)
}

// camelMode says what the analyzer makes of a word in camel case.
type camelMode int

const (
	// camelSplit: its parts ("getFileContents": get, file, contents).
	camelSplit camelMode = iota
	// camelBoth: its parts and the whole word, for an index, so that
	// "GitHub" in a description meets "github" in a request or a server
	// name, and "getFile" meets "get file".
	camelBoth
	// camelWhole: the whole word, for a request: a user who writes
	// "GitHub" or "JavaScript" means the one word, not git or java.
	camelWhole
)

// split appends the lower-case words of s to dst, treating camel case
// as a.camel says.
func (a *analyzer) split(dst []string, s string) []string {
	if a.camel == camelSplit || !hasCamel(s) {
		return splitWords(dst, s)
	}
	start := -1
	for i, r := range s {
		switch {
		case !notAlnum(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			dst = a.splitRun(dst, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		dst = a.splitRun(dst, s[start:])
	}
	return dst
}

// splitRun appends the words of one run of letters and digits: its parts
// and, where camel case split it, the whole as a.camel says.
func (a *analyzer) splitRun(dst []string, run string) []string {
	n := len(dst)
	dst = splitWords(dst, run)
	if len(dst)-n < 2 {
		return dst
	}
	whole := strings.ToLower(run)
	if a.camel == camelWhole {
		return append(dst[:n], whole)
	}
	return append(dst, whole)
}

func notAlnum(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// hasCamel reports whether s has an upper-case letter right after a
// letter or digit: the only place where splitWords may split a word
// other than at a non-alphanumeric.
func hasCamel(s string) bool {
	var prev rune
	for _, r := range s {
		if unicode.IsUpper(r) && prev != 0 && (unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev)) {
			return true
		}
		prev = r
	}
	return false
}

// stem is the Porter2 (Snowball English) stem of the lower-case word w.
func stem(w string) string {
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

// splitWords appends the lower-case words of s to dst. A word is a run of
// letters and digits; a run is also split where a lower-case letter or digit
// meets an upper-case one ("getFile": get, file) and before the last capital
// of an acronym that starts a word ("HTTPServer": http, server). Digits stay
// with their letters ("s3", "base64").
func splitWords(dst []string, s string) []string {
	if isASCII(s) {
		return splitASCII(dst, s)
	}
	rs := []rune(s)
	start := -1
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			if start >= 0 {
				dst = append(dst, strings.ToLower(string(rs[start:i])))
				start = -1
			}
		case start < 0:
			start = i
		case camelBoundary(rs[i-1], rs[i], runeAt(rs, i+1), runeAt(rs, i+2)):
			dst = append(dst, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, strings.ToLower(string(rs[start:])))
	}
	return dst
}

// splitASCII is splitWords for an ASCII string, without decoding runes: the
// common case. A word without capitals is a substring of s.
func splitASCII(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case !isAlnum(c):
			if start >= 0 {
				dst = append(dst, strings.ToLower(s[start:i]))
				start = -1
			}
		case start < 0:
			start = i
		case camelBoundary(rune(s[i-1]), rune(c), byteAt(s, i+1), byteAt(s, i+2)):
			dst = append(dst, strings.ToLower(s[start:i]))
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, strings.ToLower(s[start:]))
	}
	return dst
}

// camelBoundary reports whether a word starts at cur, given that prev and
// cur are letters or digits; next and after follow cur (0 past the end).
// An acronym's plural stays whole ("PRs", "URLs").
func camelBoundary(prev, cur, next, after rune) bool {
	if !unicode.IsUpper(cur) {
		return false
	}
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	plural := next == 's' && !unicode.IsLower(after)
	return unicode.IsUpper(prev) && unicode.IsLower(next) && !plural
}

func runeAt(rs []rune, i int) rune {
	if i < len(rs) {
		return rs[i]
	}
	return 0
}

func byteAt(s string, i int) rune {
	if i < len(s) {
		return rune(s[i])
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}
