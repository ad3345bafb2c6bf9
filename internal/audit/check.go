package audit

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// errMoved marks the error of a trail whose file was moved or removed
// while open, and cannot be opened again at its path.
var errMoved = errors.New("was moved or removed while the gateway wrote it, and cannot be opened again at its path")

// inPlace makes sure l's file is still the trail at its path. A file
// removed while open (its directory deleted, a directory put in its
// place) or moved away (rotated: logrotate's mv, maybe with a new file
// made at the path) is not where its readers look, so the file at the
// path is opened, made if need be, the chain going on from the last line
// written: the old file and the new one verify in order as one. A
// removal is seen at once (its lines would reach no one); a move, whose
// lines are still read in the moved file, is looked for at most every
// "every": a stat of the path costs a line's write as much again
// (BenchmarkWrite). It fails while the path cannot be opened. l.mu must
// be held.
func (l *Log) inPlace(every time.Duration) error {
	if l.f == nil {
		return nil
	}
	moved, err := l.moved(every)
	if err != nil || !moved {
		return err
	}
	f, err := openTrail(l.path)
	if err != nil {
		if pe, ok := errors.AsType[*os.PathError](err); ok {
			err = pe.Err // the path is said once
		}
		return fmt.Errorf("audit: %s %w (%w): restore its directory, or remove what stands in its place", l.path, errMoved, err)
	}
	l.f.Close()
	l.f, l.w, l.torn = f, f, false
	return nil
}

// moved reports whether l's file is no longer the one at its path,
// looking at the path when it was last looked at "every" ago or more. A
// device is not rotated; a path that cannot be looked at (a directory
// not searchable) leaves a file still linked where it is.
func (l *Log) moved(every time.Duration) (bool, error) {
	var st, at unix.Stat_t
	if err := unix.Fstat(int(l.f.Fd()), &st); err != nil {
		return false, fmt.Errorf("audit: checking %s: %w", l.path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return false, nil
	case st.Nlink == 0:
		return true, nil
	case every > 0 && time.Since(l.looked) < every:
		return false, nil
	}
	l.looked = time.Now()
	if err := unix.Stat(l.path, &at); err != nil {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR), nil
	}
	return at.Dev != st.Dev || at.Ino != st.Ino, nil
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
	err := l.inPlace(0)
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
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EROFS) || errors.Is(err, errMoved)
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
