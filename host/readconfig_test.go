package host_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/host"
)

func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		path := filepath.Join(dir, name)
		data := append([]byte("[]\n"), bytes.Repeat([]byte("#"), size-3)...)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	at := write("at-limit.yaml", host.MaxConfigBytes)
	if data, err := host.ReadConfigFile(at); err != nil || len(data) != host.MaxConfigBytes {
		t.Errorf("a file of exactly MaxConfigBytes: %d bytes, %v", len(data), err)
	}

	over := write("over.yaml", host.MaxConfigBytes+1)
	_, err := host.ReadConfigFile(over)
	if want := "config file " + over + " is larger than 4 MiB"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a file one byte over: %v, want %q", err, want)
	}

	// An endless file is refused after MaxConfigBytes+1 bytes, not read
	// until memory runs out.
	if _, err := host.ReadConfigFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "is larger than 4 MiB") {
		t.Errorf("/dev/zero: %v", err)
	}

	if _, err := host.ReadConfigFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}
