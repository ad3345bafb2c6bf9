package dirprune

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Prune keeps the newest max files that match and leaves every other
// file and directory alone.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		p := filepath.Join(dir, strconv.Itoa(i)+".json")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"notes.txt", "sub.json"} {
		if err := os.WriteFile(filepath.Join(dir, other), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "sub.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	Prune(dir, 2, func(name string) bool { return strings.HasSuffix(name, ".json") })
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"3.json", "4.json", "notes.txt", "sub.json"}; !slices.Equal(names, want) {
		t.Errorf("left %q, want %q", names, want)
	}
	Prune(filepath.Join(dir, "gone"), 0, func(string) bool { return true }) // no directory: nothing to do
}
