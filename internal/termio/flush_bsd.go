//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package termio

import "golang.org/x/sys/unix"

// fread is <sys/fcntl.h>'s FREAD: TIOCFLUSH's argument for the input
// queue.
const fread = 1

// flushInput discards what was typed at the terminal fd and not yet read
// (TIOCFLUSH of the input queue), so that a key typed ahead during a turn
// cannot answer a question the person has not seen.
func flushInput(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread) }
