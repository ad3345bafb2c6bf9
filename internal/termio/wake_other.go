//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package termio

import "errors"

// Elsewhere a terminal read cannot be interrupted: Interrupt does nothing.
func newWakePipe() wakePipe { return closedPipe }

func (wakePipe) raise() {}

func (wakePipe) take() {}

func (wakePipe) waitFor(int) (bool, error) { return false, errors.ErrUnsupported }

func (wakePipe) close() {}
