// Package atomicfile replaces files so that a reader sees the old file or
// the new one, never half of one.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Write replaces path with data: a temporary file in the same directory,
// given perm, synced, then renamed over path, and the directory synced
// so that the rename outlasts a crash. On error path is untouched (but
// for a failed sync of the directory, which the error says) and no
// temporary file is left. A symbolic link to a file (a config kept
// in a dotfiles repository) stays one: the file it leads to is replaced
// (a link that leads nowhere is replaced itself).
func Write(path string, data []byte, perm os.FileMode) error {
	link := path
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		// The temporary file's name would mean nothing to the reader:
		// the file and its directory are what to fix.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err
		}
		what := path
		if link != path {
			what = link + " is a link to " + path + ", which"
		}
		return fmt.Errorf("%s cannot be replaced: no file can be made in its directory %s (%w), which the replace needs: make the directory writable", what, filepath.Dir(path), err)
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// The rename lives in the directory until it is synced: a crash
	// before that can bring back the old file, or none. A file system
	// that cannot sync a directory (some FUSE and network mounts) has
	// nothing to sync it with: the write stands as it would have there.
	if err := syncDir(filepath.Dir(path)); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return fmt.Errorf("%s was replaced, but syncing its directory failed, so a crash may undo it: %w", path, err)
	}
	return nil
}

// syncDir flushes the entries of the directory dir to disk. A variable,
// so that a test can see it called.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
