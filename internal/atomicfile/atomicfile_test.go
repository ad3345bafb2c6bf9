package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, content := range []string{"first", "second"} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("content %q, want %q", data, content)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	// A directory that does not exist: an error, nothing written.
	if err := Write(filepath.Join(dir, "no", "f"), nil, 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
	// A rename over a directory fails and leaves no temporary file.
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o600)
	if err := Write(filepath.Join(dir, "d"), []byte("x"), 0o600); err == nil {
		t.Error("replaced a directory")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}

// A symbolic link stays one: the file it leads to gets the new content
// (a config kept in a dotfiles repository keeps being the repository's).
func TestWriteThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "mcpbridge.yaml")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "mcpbridge.yaml")
	if err := os.Symlink(filepath.Join("dotfiles", "mcpbridge.yaml"), link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", st, err)
	}
	if data, _ := os.ReadFile(target); string(data) != "new" {
		t.Errorf("the target holds %q, want the new content", data)
	}
}

// The rename is made durable: the directory that holds the new entry is
// synced after it (before, a crash right after Write returned could bring
// back the old file, or none). Through a link, that is the target's
// directory, where the rename happens.
func TestWriteSyncsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "f")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "f")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var synced []string
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(d string) error {
		// Synced after the rename, or the sync is of the old entry.
		if data, _ := os.ReadFile(target); string(data) != "new" {
			t.Errorf("%s synced while the file holds %q, before the rename", d, data)
		}
		synced = append(synced, d)
		return orig(d)
	}
	if err := Write(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Dir(target); len(synced) != 1 || synced[0] != want {
		t.Errorf("directories synced: %q, want [%q]", synced, want)
	}
}

// A directory that cannot be synced fails the write, saying the file was
// replaced all the same (a caller must not take it for the old one).
func TestWriteDirectorySyncFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	orig := syncDir
	t.Cleanup(func() { syncDir = orig })
	syncDir = func(string) error { return errors.New("input/output error") }
	err := Write(path, []byte("new"), 0o600)
	if err == nil || !strings.Contains(err.Error(), path+" was replaced") || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Write: %v, want it to say the file was replaced and why the sync failed", err)
	}
}

// A file system that cannot sync a directory at all (EINVAL, ENOTSUP:
// some FUSE and network mounts) does not fail the write: it would report
// as failed a file every caller then takes for the old one.
func TestWriteDirectorySyncUnsupported(t *testing.T) {
	for _, errno := range []error{syscall.EINVAL, syscall.ENOTSUP} {
		path := filepath.Join(t.TempDir(), "f")
		orig := syncDir
		t.Cleanup(func() { syncDir = orig })
		syncDir = func(string) error { return &os.PathError{Op: "sync", Path: filepath.Dir(path), Err: errno} }
		if err := Write(path, []byte("new"), 0o600); err != nil {
			t.Errorf("a directory sync failing with %v: %v, want the write to stand", errno, err)
		}
		if data, _ := os.ReadFile(path); string(data) != "new" {
			t.Errorf("the file holds %q", data)
		}
	}
}
