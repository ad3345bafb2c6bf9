//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// ABI returns 0: Landlock is Linux's.
func ABI() int { return 0 }

func confineAndExec(Plan, string, []string) error {
	return errors.New("sandboxes are supported on Linux only, not " + runtime.GOOS)
}
