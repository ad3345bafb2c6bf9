//go:build !linux

package sandbox

import "syscall"

// SysProcAttr does nothing: off Linux no sandboxed child starts.
func (p Plan) SysProcAttr(*syscall.SysProcAttr) {}

// StartError returns err.
func (p Plan) StartError(err error) error { return err }

// userMay reports false: off Linux no sandbox denies anything.
func userMay(string, bool) bool { return false }
