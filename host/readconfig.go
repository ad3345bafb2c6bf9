package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// readError is a config file that exists, or may, but cannot be read:
// its text says so, why and what to check; it wraps the *fs.PathError.
type readError struct {
	msg string
	err error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.err }

// unreadable is the error of the config file at path that could not be
// opened or read (err).
func unreadable(path string, err error) error {
	why := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err // its path is path, said once
	}
	var msg string
	switch {
	case errors.Is(err, syscall.EISDIR):
		msg = fmt.Sprintf("config file %s is a directory: name the config file in it (such as %s)", path, filepath.Join(path, "mcpbridge.yaml"))
	case errors.Is(err, syscall.ENOTDIR):
		msg = fmt.Sprintf("config file %s cannot be read: %s", path, notDirectory(path))
	case errors.Is(err, fs.ErrPermission):
		msg = fmt.Sprintf("config file %s cannot be read: %v: check its owner and mode (ls -l %s): the user mcpbridge runs as must be able to read it", path, why, path)
	default:
		msg = fmt.Sprintf("config file %s cannot be read: %v", path, why)
	}
	return &readError{msg: msg, err: err}
}

// notDirectory says which directory of path is a file (ENOTDIR): the
// nearest one that exists.
func notDirectory(path string) string {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			return dir + " is a file, not a directory: correct the path"
		}
		break
	}
	return "a directory on its path is a file: correct the path"
}
