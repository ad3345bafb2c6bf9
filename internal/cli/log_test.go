package cli

import (
	"strconv"
	"strings"
	"testing"
)

// textRecords parses what slog's TextHandler wrote (the -v log on stderr)
// into one map of keys to values per record; lines that are not records
// (progress, the command's own output) are skipped. A record may follow a
// progress line without a line break: it starts at its time= key.
func textRecords(out string) []map[string]string {
	var recs []map[string]string
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r\033[K", "\n"), "\n") {
		if i := strings.Index(line, "time="); i > 0 {
			line = line[i:]
		}
		if rec, ok := parseTextRecord(line); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// parseTextRecord parses one line of key=value pairs, values quoted as
// strconv.Quote does when they need it.
func parseTextRecord(line string) (map[string]string, bool) {
	rec := map[string]string{}
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimLeft(line, " ") {
		key, rest, ok := strings.Cut(line, "=")
		if !ok || key == "" || strings.ContainsAny(key, ` "`) {
			return nil, false
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && rest[end] != '"' {
				if rest[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(rest) {
				return nil, false
			}
			v, err := strconv.Unquote(rest[:end+1])
			if err != nil {
				return nil, false
			}
			val, line = v, rest[end+1:]
		} else {
			val, line, _ = strings.Cut(rest, " ")
		}
		rec[key] = val
	}
	_, hasLevel := rec["level"]
	_, hasMsg := rec["msg"]
	return rec, hasLevel && hasMsg
}

// hasTextRecord reports whether out has a record at level with message
// msg and every attribute of attrs (key-value pairs).
func hasTextRecord(out, level, msg string, attrs ...string) bool {
outer:
	for _, rec := range textRecords(out) {
		if rec["level"] != level || rec["msg"] != msg {
			continue
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			if v, ok := rec[attrs[i]]; !ok || v != attrs[i+1] {
				continue outer
			}
		}
		return true
	}
	return false
}

func TestParseTextRecord(t *testing.T) {
	out := "⠋ connecting 1/2: slow\r\033[K⠙ connecting 1/2: slow" +
		`time=2026-01-01T00:00:00.000Z level=WARN msg="connection lost; reconnecting" entry=a server=a delay=20ms err="read: \"x\" = y"` + "\n" +
		"plain output\n"
	if !hasTextRecord(out, "WARN", "connection lost; reconnecting", "entry", "a", "delay", "20ms", "err", `read: "x" = y`) {
		t.Errorf("record not found in %q: %v", out, textRecords(out))
	}
	if hasTextRecord(out, "WARN", "connection lost; reconnecting", "entry", "b") || hasTextRecord(out, "INFO", "connection lost; reconnecting") {
		t.Error("a record matched a wrong level or attribute")
	}
	if n := len(textRecords(out)); n != 1 {
		t.Errorf("%d records, want 1", n)
	}
}
