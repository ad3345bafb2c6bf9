package agent

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A session is a conversation saved as JSON lines, one message a line, in
// DIR/ID.jsonl; results over the cap go to DIR/ID/. Only messages are
// saved: a resumed session gets its tools from the bridge of the day.

// maxSessionBytes bounds a session's file, and so each of its messages:
// it is read back whole into memory. A conversation a model takes is a
// few MiB at most, its results capped.
const maxSessionBytes = 64 << 20

// Session is one saved conversation. Its methods are safe for concurrent
// use.
type Session struct {
	ID  string
	Dir string // the sessions directory

	mu   sync.Mutex
	file *os.File
	size int64 // of the file
	msgs []Message
	// failed is the first Append that failed: later ones fail with it,
	// so that the file stays the conversation's first messages, whole.
	failed error
}

// ErrNoSession is returned by Latest when dir holds no session.
var ErrNoSession = errors.New("no saved session")

// NewSession creates a session in dir (made if missing) with a new id,
// sortable by time.
func NewSession(dir string, now time.Time) (*Session, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the sessions directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, id+".jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating session %s: %w", id, err)
	}
	if err := lock(f, id); err != nil {
		f.Close()
		return nil, err
	}
	return &Session{ID: id, Dir: dir, file: f}, nil
}

// lock takes the lock of a session's file, which Close releases: two
// runs appending to one file would interleave their turns, and the API
// refuses a conversation whose calls are not followed by their results.
// A file system without locks is used without.
func lock(f *os.File, id string) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("session %s is open in another run of mcpbridge agent: go on with it there, or start a new session", id)
	}
	return nil
}

// OpenSession opens the session id of dir, reading its messages, to
// continue it.
func OpenSession(dir, id string) (*Session, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	path := filepath.Join(dir, id+".jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %s in %s", ErrNoSession, id, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	// Read under the lock: another run may be appending.
	if err := lock(f, id); err != nil {
		f.Close()
		return nil, err
	}
	msgs, whole, err := readSession(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	// A last line torn by a crash (or a full disk) goes, and so does a
	// last turn left without its results: the next message starts a line
	// of its own, and the file stays the conversation resumed.
	if err := dropTail(f, whole); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: dropping its torn last line or unanswered last turn: %w", id, err)
	}
	return &Session{ID: id, Dir: dir, file: f, size: whole, msgs: msgs}, nil
}

// dropTail cuts f to its first whole bytes, when it has more: a
// truncation to its own size would still date the file, and a session
// resumed and left without a word would count as the one used last.
func dropTail(f *os.File, whole int64) error {
	info, err := f.Stat()
	if err != nil || info.Size() > whole {
		return f.Truncate(whole)
	}
	return nil
}

// Latest returns the id of the session of dir used last: the one whose
// file was written last (a session resumed and written to yesterday, not
// one created the day before and left), the later created on a tie. A
// session never written to (a run left before its first message) is not
// one to go on with.
func Latest(dir string) (string, error) {
	// Listed, not globbed: dir's own name may hold [ or *.
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("listing the sessions: %w", err)
	}
	latest, used := "", time.Time{}
	for _, e := range entries { // sorted by name, and so by creation
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || strings.HasPrefix(id, ".") { // OpenSession refuses a dot name
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since listed
		}
		if err != nil {
			return "", fmt.Errorf("listing the sessions: %w", err)
		}
		if info.Size() == 0 {
			continue // never written to: a run left before its first message
		}
		if t := info.ModTime(); latest == "" || !t.Before(used) {
			latest, used = id, t
		}
	}
	if latest == "" {
		return "", fmt.Errorf("%w in %s", ErrNoSession, dir)
	}
	return latest, nil
}

// readSession reads the messages of the session file path, and how many
// of its bytes hold them: a last line without its newline (a write a
// crash or a full disk tore) is left out, and so is a last turn whose
// calls have not all got their results (completeCalls).
func readSession(path string) (msgs []Message, whole int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > maxSessionBytes {
		return nil, 0, tooLong(path, fmt.Sprintf("is %d bytes, ", info.Size()))
	}
	// Bounded as read too, each line with it: the file may grow
	// meanwhile, or not say its size (a link to a device).
	lr := &io.LimitedReader{R: f, N: maxSessionBytes + 1}
	r := bufio.NewReader(lr)
	var ends []int64 // where each message's line ends
	kept := func() ([]Message, int64, error) {
		if lr.N == 0 {
			return nil, 0, tooLong(path, "is ")
		}
		msgs = completeCalls(msgs)
		if len(msgs) == 0 {
			return nil, 0, nil
		}
		return msgs, ends[len(msgs)-1], nil
	}
	for line := 1; ; line++ {
		b, err := readLine(r)
		if err == io.EOF {
			return kept()
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading %s: %w", path, err)
		}
		if b[len(b)-1] != '\n' { // torn, whatever it holds
			return kept()
		}
		var m Message
		err = json.Unmarshal(b, &m)
		switch {
		case err != nil:
			return nil, 0, fmt.Errorf("%s:%d: not a saved message: %w", path, line, err)
		case m.Role == "":
			return nil, 0, fmt.Errorf("%s:%d: not a saved message: it has no role", path, line)
		}
		msgs = withMessage(msgs, m)
		whole += int64(len(b))
		ends = append(ends[:len(msgs)-1], whole) // a prompt joined to the one before ends here
	}
}

// tooLong is the error of a session file past maxSessionBytes; is says
// how big it is.
func tooLong(path, is string) error {
	return fmt.Errorf("%s %sover the %d MiB a session keeps, so it cannot be resumed: start a new session (mcpbridge agent without --resume or --continue)",
		path, is, maxSessionBytes>>20)
}

// readLine reads one line of r, its newline included; the last may have
// none. Its length is r's bound.
func readLine(r *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(b) > 0:
			return b, nil
		}
		return b, err
	}
}

// withMessage is msgs with m added. A prompt after one the model never
// answered (its run failed, or was cancelled or killed first) joins it,
// in a run as in a session read back: the same question asked again
// stands once, another follows it in the same turn. So the model is not
// asked a question twice, nor the API sent two user turns in a row, which
// some refuse (a chat template that wants the roles to alternate); the
// file keeps each prompt as it was asked.
func withMessage(msgs []Message, m Message) []Message {
	n := len(msgs)
	if m.Role != "user" || n == 0 || msgs[n-1].Role != "user" {
		return append(msgs, m)
	}
	before, ok := msgs[n-1].Content.(string)
	now, isText := m.Content.(string)
	switch {
	case !ok || !isText: // parts: a harness's own, kept as given
		return append(msgs, m)
	case strings.TrimSpace(before) != strings.TrimSpace(now):
		m.Content = before + "\n\n" + now
	}
	return append(msgs[:n-1], m)
}

// completeCalls drops a trailing assistant turn whose calls have not all
// got their results (the run was killed in the middle): the API refuses
// such a conversation.
func completeCalls(msgs []Message) []Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		if len(msgs)-1-i < len(m.ToolCalls) {
			return msgs[:i]
		}
		break
	}
	return msgs
}

// Messages returns the messages saved when the session was opened.
func (s *Session) Messages() []Message { return slices.Clone(s.msgs) }

// Saved reports whether the session's file holds a message: whether
// there is anything to go on with.
func (s *Session) Saved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size > 0
}

// SpillDir is where the session's cut results go.
func (s *Session) SpillDir() string { return filepath.Join(s.Dir, s.ID) }

// Append saves m (Options.Record). A message that would take the file
// past what is read back, or a write that fails, stops the saving: this
// and every later Append fail, and the file keeps the messages before
// it, whole.
func (s *Session) Append(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	line := append(b, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failed != nil:
		return fmt.Errorf("session %s stopped saving at a message it could not save (%w): no later message is saved; start a new session to save the conversation from here on (this one resumes from its last saved message)", s.ID, s.failed)
	case len(line) > maxSessionBytes:
		s.failed = fmt.Errorf("a message of %d bytes is longer than a session keeps (%d bytes)", len(b), maxSessionBytes)
		return s.failed
	case int64(len(line)) > maxSessionBytes-s.size:
		s.failed = fmt.Errorf("a message of %d bytes would take the session past the %d MiB it keeps", len(b), maxSessionBytes>>20)
		return s.failed
	}
	n, err := s.file.Write(line)
	s.size += int64(n)
	if err != nil {
		s.failed = err
		return err
	}
	return nil
}

// Close closes the session's file.
func (s *Session) Close() error { return s.file.Close() }
