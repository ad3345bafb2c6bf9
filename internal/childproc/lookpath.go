package childproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// lookPath resolves file like exec.LookPath, but through the PATH of the
// child's environment instead of ours, so an overlaid PATH decides which
// program runs (docs/upstream.md §5). A name containing a slash is used as given
// (relative to the child's working directory). Like exec.LookPath, a match
// in a relative PATH entry is refused with exec.ErrDot.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path, _ := lookupEnv(env, "PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "." // shell semantics: an empty entry is the current directory
		}
		candidate := filepath.Join(dir, file)
		if !isExecutable(candidate) {
			continue
		}
		if !filepath.IsAbs(candidate) {
			return "", &exec.Error{Name: file, Err: exec.ErrDot}
		}
		return candidate, nil
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// isExecutable reports whether path is a file with an execute bit; the
// kernel has the final word at exec time.
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
