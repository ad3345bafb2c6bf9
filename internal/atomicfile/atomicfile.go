// Package atomicfile replaces files so that a reader sees the old file or
// the new one, never half of one.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data: a temporary file in the same directory,
// given perm, synced, then renamed over path. On error path is untouched
// and no temporary file is left. A symbolic link to a file (a config kept
// in a dotfiles repository) stays one: the file it leads to is replaced
// (a link that leads nowhere is replaced itself).
func Write(path string, data []byte, perm os.FileMode) error {
	link := path
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		if link != path {
			return fmt.Errorf("%s is a link to %s, which cannot be replaced: %w", link, path, err) // untested: the tests run as root, who writes anywhere
		}
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
