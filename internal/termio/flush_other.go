//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package termio

import "errors"

// flushInput cannot discard typed-ahead keys on this system.
func flushInput(int) error { return errors.ErrUnsupported }
