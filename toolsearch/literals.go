package toolsearch

import (
	pathpkg "path"
	"strings"
)

// Requests often carry the thing to work on: a URL ("open
// https://go.dev"), a host ("news.ycombinator.com"), a file name or path
// ("notes.txt", "~/pics/cat.png", "/etc/hosts"). Their pieces ("https",
// "com", "txt") are noise to a ranking, but what they are tells which
// tools fit: one that takes a URL, one that works on files. So, with
// expansion on, a URL or host in a query is replaced by "url", and a file
// name or path by "file" and the words of its name without the extension
// (".circleci/config.yml": file circleci config).

// fileExts are extensions that make a word a file name.
var fileExts = setOf(`txt md markdown json yaml yml toml ini cfg conf csv tsv xml html htm css js mjs ts tsx jsx
	go py rb rs java c h cpp sh sql log env lock pdf doc docx xls xlsx ppt pptx png jpg jpeg gif svg webp bmp ico
	mp3 wav ogg mp4 mov avi webm zip tar gz tgz jar`)

// webTLDs are top-level domains that make a dotted word a host name.
var webTLDs = setOf(`com org net io dev ai app co edu gov info biz me us uk de fr eu jp cn ru in ca au ch nl se`)

// replaceLiterals returns query with its URLs and hosts replaced by "url"
// and its file names and paths by "file".
func replaceLiterals(query string) string {
	if !strings.ContainsAny(query, "./~") {
		return query
	}
	words := strings.Fields(query)
	changed := false
	for i, w := range words {
		lit := strings.Trim(w, `"'()[]<>,;:!?`)
		switch literalKind(lit) {
		case "url":
			words[i], changed = "url", true
		case "file":
			words[i], changed = "file "+strings.TrimSuffix(lit, pathpkg.Ext(lit)), true
		}
	}
	if !changed {
		return query
	}
	return strings.Join(words, " ")
}

// literalKind returns "url", "file" or "" for a word of a query.
func literalKind(w string) string {
	lw := strings.ToLower(w)
	switch {
	case strings.Contains(lw, "://") || strings.HasPrefix(lw, "www."):
		return "url"
	case strings.HasPrefix(lw, "/") || strings.HasPrefix(lw, "~/") || strings.HasPrefix(lw, "./"):
		return "file"
	}
	host, _, _ := strings.Cut(lw, "/")
	if dot := strings.LastIndexByte(host, '.'); dot > 0 && isWebTLD(host[dot+1:]) {
		return "url"
	}
	if ext := strings.TrimPrefix(pathpkg.Ext(lw), "."); ext != "" && isFileExt(ext) && len(lw) > len(ext)+1 {
		return "file"
	}
	return ""
}

func isWebTLD(s string) bool { _, ok := webTLDs[s]; return ok }

func isFileExt(s string) bool { _, ok := fileExts[s]; return ok }
