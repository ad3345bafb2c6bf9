// Package audit writes and verifies the gateway's audit trail: one JSON
// line per call, appended with O_APPEND, each carrying the SHA-256 of the
// line before it, so that an edited, removed or reordered line breaks the
// chain, as does a first line cut (Verify). A line torn by a crash (no
// trailing newline) is skipped by readers and the chain continues from
// the last whole line.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Genesis is the prev value of a file's first line.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Entry is one audited request. Log.Write ignores Prev and writes the
// previous line's hash; Prev is there for readers.
type Entry struct {
	Time     time.Time       `json:"time"`
	Identity string          `json:"identity"`
	Client   string          `json:"client,omitempty"`
	Session  string          `json:"session,omitempty"`
	Method   string          `json:"method"`
	Name     string          `json:"name"`
	Server   string          `json:"server,omitempty"`
	Outcome  string          `json:"outcome"`
	Reason   string          `json:"reason,omitempty"`
	Duration float64         `json:"durationMs"`
	TraceID  string          `json:"traceId,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	ArgKeys  []string        `json:"argKeys,omitempty"`
	ArgsHash string          `json:"argsHash,omitempty"`
	// Call and Parent tie the calls a program made (code mode's run_code)
	// to the call that ran it: Call, on a call whose tool made calls for
	// its caller, is an id that each of those carries as Parent. (Its
	// line comes after theirs: it is written when it ends.)
	Call   string `json:"call,omitempty"`
	Parent string `json:"parent,omitempty"`
	Prev   string `json:"prev"`
}

// Log appends entries to one file (or a writer). Safe for concurrent use:
// the chain needs each line written in the order its hash was taken.
type Log struct {
	mu     sync.Mutex
	w      io.Writer
	f      *os.File              // nil for a writer the caller owns
	path   string                // f's, to make it again (inPlace)
	prev   [sha256.Size * 2]byte // the last line's hash, hex
	buf    []byte                // the last line's, reused
	err    error                 // the last write's or Check's, nil once one succeeds
	closed bool
	torn   bool      // a failed write left part of a line: the next starts a new one
	looked time.Time // when inPlace last looked at the path
}

// lookEvery is how often a line's write looks whether its file was moved
// away from its path (rotated): a line written meanwhile goes on to the
// moved file, which the new one continues.
const lookEvery = 100 * time.Millisecond

// ErrClosed is Write's error after Close.
var ErrClosed = errors.New("audit: the trail is closed")

// Open opens path for appending (created 0600 if absent) and continues the
// chain from its last whole line. "-" writes to stdout.
func Open(path string, stdout io.Writer) (*Log, error) {
	if path == "-" {
		return newLog(stdout, nil, Genesis), nil
	}
	f, err := openTrail(path)
	if err != nil {
		return nil, err
	}
	prev, torn, err := lastHash(f)
	if err == nil && torn {
		// End the torn line, so the next one is whole.
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit: reading %s: %w", path, err)
	}
	l := newLog(f, f, prev)
	l.path = path
	return l, nil
}

// openTrail opens path for appending, created 0600 if absent, and takes
// its lock.
func openTrail(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: opening %s: %w", path, err)
	}
	// One writer a trail: two would interleave their chains, which verify
	// then reports as tampering. The lock goes with the file's Close. A
	// device (/dev/stdout, a test's /dev/full) is no trail of one's own.
	if err := lockTrail(f); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("audit: %s is written by another mcpbridge (or another gateway entry of this one): give each its own audit file", path)
		}
		return nil, fmt.Errorf("audit: locking %s: %w", path, err)
	}
	return f, nil
}

// lockTrail takes the lock of a regular file's trail; nothing for any
// other file.
func lockTrail(f *os.File) error {
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

func newLog(w io.Writer, f *os.File, prev string) *Log {
	l := &Log{w: w, f: f}
	copy(l.prev[:], prev)
	return l
}

// lastHash returns the hash of f's last whole entry (Genesis when it has
// none) and whether f ends in a torn line. Only the tail is read: lines
// are far shorter than 1 MiB.
func lastHash(f *os.File) (string, bool, error) {
	st, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	const tail = 1 << 20
	off := max(0, st.Size()-tail)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return "", false, err
	}
	torn := len(buf) > 0 && buf[len(buf)-1] != '\n'
	lines := bytes.Split(buf, []byte{'\n'})
	if last := lines[len(lines)-1]; torn && isEntry(last) {
		// A whole entry that lost only its newline: the newline Open
		// writes makes it the last line, which the next one follows.
		return hashOf(last), torn, nil
	}
	lines = lines[:len(lines)-1] // after the last newline: "" or the torn line
	for i := len(lines) - 1; i >= 0; i-- {
		if isEntry(lines[i]) {
			return hashOf(lines[i]), torn, nil
		}
	}
	return Genesis, torn, nil
}

// isEntry reports whether line is an audit entry: a JSON object with a
// prev; anything else is a line torn by a crash.
func isEntry(line []byte) bool {
	var e struct {
		Prev *string `json:"prev"`
	}
	return json.Unmarshal(line, &e) == nil && e.Prev != nil
}

func hashOf(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:])
}

// Write appends e as one line chained to the previous one, its fields cut
// to what a line may hold (bound: a long one ends in "…", arguments over
// 32 KiB are written as their SHA-256, ArgsHashPrefix), in one
// write(2) to the file opened with O_APPEND, before it returns: a line
// Write returned nil for is in the kernel's hands, so a crash of the
// process loses none (a crash of the machine loses what the kernel had
// not yet flushed: no fsync per line). A failed write is returned (the
// caller fails closed) and the chain does not advance. The write is
// synchronous: handing lines to a goroutine of their own cost a call more
// (a wake-up per line) than the write itself.
func (l *Log) Write(e Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if err := l.inPlace(lookEvery); err != nil {
		l.err = err
		return err
	}
	bound(&e)
	line, err := appendEntry(l.buf[:0], &e, l.prev[:])
	if err != nil {
		return fmt.Errorf("audit: encoding an entry: %w", err)
	}
	line = append(line, '\n')
	if cap(line) <= maxKeptBuf {
		l.buf = line // kept for the next line: one allocation less per call
	}
	out, prefix := line, 0
	if l.torn {
		out, prefix = append([]byte{'\n'}, line...), 1 // end what the failed write left
	}
	if n, err := l.w.Write(out); err != nil {
		// A write can fail part way (a full disk): what it wrote is a
		// torn line, which the next line must not be glued to; all of it
		// but its newline is a whole entry, which the next line follows
		// (as a restart's lastHash would have it).
		switch {
		case n == len(out)-1:
			sum := sha256.Sum256(line[:len(line)-1])
			hex.Encode(l.prev[:], sum[:])
			l.torn = true
		case n > prefix:
			l.torn = true
		case n == prefix:
			l.torn = false
		}
		l.err = fmt.Errorf("audit: writing: %w", err)
		return l.err
	}
	l.torn = false
	sum := sha256.Sum256(line[:len(line)-1])
	hex.Encode(l.prev[:], sum[:])
	l.err = nil
	return nil
}

// maxKeptBuf bounds the buffer a Log keeps between lines: a line with
// large arguments (args: full) is not kept in memory.
const maxKeptBuf = 16 << 10

// Err returns the last write's error, or what the last Check found: nil
// once a write succeeds again, or a Check finds the trail can take one.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Close closes the file (a Log on stdout has nothing to close); later
// writes fail with ErrClosed. Idempotent.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.f == nil {
		l.closed = true
		return nil
	}
	l.closed = true
	return l.f.Close()
}
