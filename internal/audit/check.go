package audit

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errRemoved marks the error of a trail whose file was removed while
// open and cannot be made again at its path.
var errRemoved = errors.New("was removed while the gateway wrote it, and cannot be made again")

// inPlace makes sure l's file is still the trail at its path: lines
// written to a file removed while open (its directory deleted, a
// directory put in its place) are read by no one and go with the
// process, so the file is made again at its path, the chain going on
// from the last line written (verify finds that the new file begins
// mid-chain: its start was removed). It fails while the path cannot be
// made. l.mu must be held.
func (l *Log) inPlace() error {
	if l.f == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(l.f.Fd()), &st); err != nil {
		return fmt.Errorf("audit: checking %s: %w", l.path, err)
	}
	if st.Nlink > 0 {
		return nil
	}
	f, err := openTrail(l.path)
	if err != nil {
		if pe, ok := errors.AsType[*os.PathError](err); ok {
			err = pe.Err // the path is said once
		}
		return fmt.Errorf("audit: %s %w (%w): restore its directory, or remove what stands in its place", l.path, errRemoved, err)
	}
	l.f.Close()
	l.f, l.w, l.torn = f, f, false
	return nil
}

// Check reports whether a line could be written now, without writing
// one: a health probe's question, so that a gateway that refuses its
// calls for want of a trail (fail closed) is taken out of its balancer,
// and put back once the trail can be written again. It looks at what
// fails a write without making one: a file removed (made again, as
// Write does), a file system read-only or full, a device that refuses
// writes (a write of nothing: /dev/full). A failed write that none of
// these explains (an I/O error) keeps the trail unwritable until a
// write succeeds. What it finds is the trail's error (Err) until the
// next write or check, so calls are refused before they run.
func (l *Log) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case l.f == nil:
		return l.err // a writer the caller owns: only its writes tell
	}
	err := l.inPlace()
	if err == nil {
		if err = room(l.f); err != nil {
			err = fmt.Errorf("audit: %s cannot take a line: %w", l.path, err)
		}
	}
	if err == nil && l.err != nil && !explained(l.err) {
		return l.err
	}
	l.err = err
	return err
}

// explained reports whether err, a write's, is one Check looks for, so
// that a check finding none of it means it is over.
func explained(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EROFS) || errors.Is(err, errRemoved)
}

// room reports what a write to f would meet that its file system tells
// without one: mounted read-only, or no free block. A device or pipe
// has none to ask: a write of nothing says what a write would.
func room(f *os.File) error {
	fd := int(f.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		_, err := unix.Write(fd, nil)
		return err
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return err
	}
	free := fs.Bavail
	if os.Geteuid() == 0 {
		free = fs.Bfree // root writes into the blocks kept for it
	}
	switch {
	case fs.Flags&unix.ST_RDONLY != 0:
		return unix.EROFS
	case free == 0:
		return unix.ENOSPC
	}
	return nil
}
