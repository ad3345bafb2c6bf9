//go:build !linux

package childproc

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// supported reports whether this platform can run stdio children: the
// process-group and parent-death handling is written for Linux only.
func supported() error {
	return fmt.Errorf("stdio children are supported on Linux only, not %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// The functions below are never reached, because start fails first.

func sysProcAttr() *syscall.SysProcAttr     { return nil }
func waitExited(int) error                  { return errors.ErrUnsupported }
func signalGroup(int, syscall.Signal) error { return errors.ErrUnsupported }
func diedOf(error) (syscall.Signal, bool)   { return 0, false }
func unreadBytes(uintptr) (int, error)      { return 0, errors.ErrUnsupported }
