package termio

import "golang.org/x/sys/unix"

// flushInput discards what was typed at the terminal fd and not yet read
// (TCIFLUSH), so that a key typed ahead during a turn cannot answer a
// question the person has not seen.
func flushInput(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
