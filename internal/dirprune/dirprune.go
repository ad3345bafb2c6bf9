// Package dirprune bounds the files a directory keeps: past a number, the
// least recently written go (the registry's cached answers, saved
// attachments).
package dirprune

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Prune removes from dir the least recently written of the regular files
// whose names match, beyond max. What it cannot read or remove stays:
// pruning is best effort, never a reason to fail the write before it.
func Prune(dir string, max int, match func(name string) bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type aged struct {
		path string
		mod  time.Time
	}
	var files []aged
	for _, e := range entries {
		if !e.Type().IsRegular() || !match(e.Name()) {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, aged{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	if len(files) <= max {
		return
	}
	slices.SortFunc(files, func(a, b aged) int { return a.mod.Compare(b.mod) })
	for _, f := range files[:len(files)-max] {
		os.Remove(f.path)
	}
}
