package agent

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A session is a conversation saved as JSON lines, one message a line, in
// DIR/ID.jsonl; results over the cap go to DIR/ID/. Only messages are
// saved: a resumed session gets its tools from the bridge of the day.

// maxSessionLine bounds one saved message read back.
const maxSessionLine = 64 << 20

// Session is one saved conversation. Its methods are safe for concurrent
// use.
type Session struct {
	ID  string
	Dir string // the sessions directory

	mu   sync.Mutex
	file *os.File
	msgs []Message
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
	return &Session{ID: id, Dir: dir, file: f}, nil
}

// OpenSession opens the session id of dir, reading its messages, to
// continue it.
func OpenSession(dir, id string) (*Session, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	path := filepath.Join(dir, id+".jsonl")
	msgs, err := readSession(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return &Session{ID: id, Dir: dir, file: f, msgs: msgs}, nil
}

// Latest returns the id of the newest session of dir.
func Latest(dir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(names) == 0 {
		return "", fmt.Errorf("%w in %s", ErrNoSession, dir)
	}
	slices.Sort(names)
	return strings.TrimSuffix(filepath.Base(names[len(names)-1]), ".jsonl"), nil
}

func readSession(path string) ([]Message, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %s", ErrNoSession, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var msgs []Message
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxSessionLine)
	for line := 1; sc.Scan(); line++ {
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s:%d: not a saved message: %w", path, line, err)
		}
		if m.Role == "" {
			return nil, fmt.Errorf("%s:%d: not a saved message: it has no role", path, line)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return completeCalls(msgs), nil
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

// SpillDir is where the session's cut results go.
func (s *Session) SpillDir() string { return filepath.Join(s.Dir, s.ID) }

// Append saves m (Options.Record).
func (s *Session) Append(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.file.Write(append(b, '\n'))
	return err
}

// Close closes the session's file.
func (s *Session) Close() error { return s.file.Close() }
