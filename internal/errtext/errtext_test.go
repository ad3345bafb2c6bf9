package errtext

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// A rewritten error reads as rewritten and is still what it was.
func TestMapKeepsWhatItWraps(t *testing.T) {
	orig := &fs.PathError{Op: "open", Path: "/home/u/secret-token", Err: fs.ErrNotExist}
	err := Map(orig, func(s string) string { return strings.ReplaceAll(s, "secret-token", "…") })
	if got := err.Error(); got != "open /home/u/…: file does not exist" {
		t.Errorf("text %q", got)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != orig || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.As/Is no longer find the original in %#v", err)
	}
}

// Text left as it was leaves the error as it was: no wrapper for nothing.
func TestMapUnchangedIsTheSameError(t *testing.T) {
	orig := errors.New("plain")
	if err := Map(orig, strings.TrimSpace); err != orig {
		t.Errorf("Map returned %#v, want the error itself", err)
	}
	if err := Map(nil, strings.ToUpper); err != nil {
		t.Errorf("Map(nil) = %v, want nil", err)
	}
}
