//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package termio

import (
	"errors"

	"golang.org/x/sys/unix"
)

// newWakePipe opens the pipe: a blocked read(2) on a terminal cannot be
// interrupted, and closing the terminal would close it for everything
// else that reads it (an elicitation's plain lines). Both ends are
// non-blocking raw descriptors, outside Go's poller.
func newWakePipe() wakePipe {
	var fds [2]int
	if unix.Pipe(fds[:]) != nil {
		return closedPipe // out of descriptors: no interrupting, reads as before
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
		unix.SetNonblock(fd, true)
	}
	return wakePipe{fds[0], fds[1]}
}

// raise marks one pending interrupt; a full pipe has plenty pending.
func (w wakePipe) raise() {
	if w.w >= 0 {
		unix.Write(w.w, []byte{1})
	}
}

// take takes back one pending interrupt, if any.
func (w wakePipe) take() {
	if w.r >= 0 {
		var b [1]byte
		unix.Read(w.r, b[:])
	}
}

// waitFor waits until fd has something to read or an interrupt is
// pending; it takes the interrupt it reports.
func (w wakePipe) waitFor(fd int) (interrupted bool, err error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(w.r), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue // a signal (the Ctrl-C itself, delivered late)
		}
		if err != nil {
			return false, err
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			var b [1]byte
			if n, _ := unix.Read(w.r, b[:]); n == 1 {
				return true, nil
			}
		}
		if fds[0].Revents != 0 {
			return false, nil // readable, hung up or in error: the read says which
		}
	}
}

func (w wakePipe) close() {
	if w.r >= 0 {
		unix.Close(w.r)
		unix.Close(w.w)
	}
}
