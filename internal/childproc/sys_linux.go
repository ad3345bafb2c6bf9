//go:build linux

package childproc

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// supported reports whether this platform can run stdio children.
func supported() error { return nil }

// sysProcAttr puts the child in its own process group, so the ladder can
// signal every descendant that stays in it, and asks the kernel to SIGKILL
// the child if the thread that started it dies, which startOnOwnThread
// keeps alive as long as the child: so only when our process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until the child pid has exited, without reaping it: an
// unreaped zombie keeps its PID, and so its process group ID, from reuse.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// signalGroup sends sig to every process in the group pgid.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}

// diedOf returns the signal that killed the child, if a signal did.
func diedOf(err error) (syscall.Signal, bool) {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return 0, false
	}
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() {
		return 0, false
	}
	return status.Signal(), true
}

// unreadBytes returns how many bytes the pipe fd holds that its reader
// has not read (FIONREAD, which a pipe answers on either end).
func unreadBytes(fd uintptr) (int, error) {
	return unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
}
