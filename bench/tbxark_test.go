package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without the peers folder the TBXark row is left out with a note, not
// failed: a fresh clone has no such folder.
func TestTBXarkSkippedWithoutItsSource(t *testing.T) {
	bin, skipped, err := buildTBXark(filepath.Join(t.TempDir(), "nopeers"), t.TempDir())
	if err != nil || bin != "" || !strings.Contains(skipped, "skipped") || !strings.Contains(skipped, tbxarkArchive) {
		t.Errorf("buildTBXark without the folder = %q, %q, %v; want a skip note", bin, skipped, err)
	}
}

// An archive entry that climbs out of the folder lands inside it.
func TestUntarGzStaysInside(t *testing.T) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"main.go", "../../escaped.go", "sub/dir/x.go"} {
		body := "package x // " + name
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	archive := filepath.Join(root, "a.tar.gz")
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "out", "src")
	if err := untarGz(archive, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"main.go", "escaped.go", "sub/dir/x.go"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "escaped.go")); err == nil {
		t.Error("an entry escaped the folder")
	}
	if err := untarGz(filepath.Join(root, "missing.tar.gz"), dir); err == nil {
		t.Error("a missing archive unpacked")
	}
}
