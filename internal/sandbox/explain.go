package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Denial is a path the sandbox kept the server from, found in what the
// server said about it.
type Denial struct {
	// Path is the path the server was refused, absolute.
	Path string
	// Key is the list that would allow it: "read" when the sandbox lets the
	// server neither read nor write it, "write" when it may only read it.
	Key string
	// Add is what to add to that list: the path, its directory when it
	// is to be created, or the runtime manager's directory that holds it.
	Add string
}

// String says what was denied and what to add, in one line:
//
//	the sandbox denied "/home/ann/.config/app/key" (outside sandbox.read and sandbox.write): to allow it, add "/home/ann/.config/app/key" to sandbox.read, or to sandbox.write if the server is to change it
func (d Denial) String() string {
	if d.Key == "write" {
		return fmt.Sprintf("the sandbox denied %q (readable, outside sandbox.write): to allow it, add %q to sandbox.write", d.Path, d.Add)
	}
	return fmt.Sprintf("the sandbox denied %q (outside sandbox.read and sandbox.write): to allow it, add %q to sandbox.read, "+
		"or to sandbox.write if the server is to change it", d.Path, d.Add)
}

// deniedText matches what runtimes print for EACCES, the error Landlock
// gives: "permission denied" (Go, bash, Node's "EACCES: permission
// denied, open '/x'", Python's "[Errno 13] Permission denied: '/x'").
var deniedText = regexp.MustCompile(`(?i)permission denied|\bEACCES\b|\[Errno 13\]`)

// pathInText matches an absolute path: quoted (which may hold spaces) or
// bare, up to a space, a quote or the ": " that follows a path in most
// messages.
var pathInText = regexp.MustCompile(`'(/[^']+)'|"(/[^"]+)"|‘(/[^’]+)’|(/[^\s'"‘’,;()]+?)(?::(?:\s|$)|[\s'"‘’,;()]|$)`)

// Explain finds in text, a line the server wrote on stderr or a tool's
// error, a path it was refused with a permission error, and reports it
// when the sandbox is why: p does not allow it, while mcpbridge, which
// runs with all of the user's rights, may use it. home is the server's
// home directory, for the runtime managers' directories (§2 of
// docs/sandbox.md).
func (p Plan) Explain(text, home string) (Denial, bool) {
	return p.explain(text, home, userMay)
}

// explain is Explain with may deciding whether the user may read (or
// write) a path.
func (p Plan) explain(text, home string, may func(path string, write bool) bool) (Denial, bool) {
	if !deniedText.MatchString(text) {
		return Denial{}, false
	}
	var writes []Denial // readable paths: a denied write, unless an unreadable one is named too
	for _, m := range pathInText.FindAllStringSubmatch(text, -1) {
		path := filepath.Clean(strings.Join(m[1:], ""))
		switch {
		case !p.readable(path) && may(path, false):
			return Denial{Path: path, Key: "read", Add: cmp.Or(managerRoot(path, nil, home), path)}, true
		case p.readable(path) && !p.writable(path) && may(path, true):
			writes = append(writes, Denial{Path: path, Key: "write", Add: writeTarget(path, home)})
		}
	}
	if len(writes) == 0 {
		return Denial{}, false
	}
	return writes[0], true
}

// writeTarget is what to add to write for path: the path when it exists,
// else its directory, where it is to be created (never home or above it:
// then the path itself, to be created first).
func writeTarget(path, home string) string {
	if _, err := os.Lstat(path); err == nil {
		return path
	}
	if dir := filepath.Dir(path); dir != "/" && !aboveHome(dir, home) {
		return dir
	}
	return path
}

// readable reports whether p lets the server read path.
func (p Plan) readable(path string) bool {
	return p.writable(path) || covered(path, p.ReadDirs, p.ReadFiles)
}

// writable reports whether p lets the server write path.
func (p Plan) writable(path string) bool { return covered(path, p.WriteDirs, p.WriteFiles) }

// covered reports whether path is one of files or lies in one of dirs.
func covered(path string, dirs, files []string) bool {
	return slices.Contains(files, path) || slices.ContainsFunc(dirs, func(d string) bool { return within(path, d) })
}
