package audit

import (
	"errors"
	"sync"
)

// ErrClosed is Append's error after Close.
var ErrClosed = errors.New("audit: the trail is closed")

// Queue writes a Log's entries on a goroutine of its own, in the order
// appended, so that a call does not wait for the disk. At most size
// entries wait; Append blocks past that (memory stays bounded, nothing is
// dropped). Safe for concurrent use.
type Queue struct {
	log   *Log
	items chan item
	done  chan struct{}

	mu     sync.RWMutex // Append holds it for reading; Close for writing
	closed bool

	errMu sync.Mutex
	err   error // the last write's, nil once one succeeds
}

// item is an entry to write, or (synced set) a marker Sync waits for.
type item struct {
	e      Entry
	synced chan struct{}
}

// NewQueue starts the goroutine writing to l; Close stops it and closes l.
func NewQueue(l *Log, size int) *Queue {
	q := &Queue{log: l, items: make(chan item, size), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *Queue) run() {
	defer close(q.done)
	for it := range q.items {
		if it.synced != nil {
			close(it.synced)
			continue
		}
		err := q.log.Write(it.e)
		q.errMu.Lock()
		q.err = err
		q.errMu.Unlock()
	}
}

// Append queues e.
func (q *Queue) Append(e Entry) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return ErrClosed
	}
	q.items <- item{e: e}
	return nil
}

// Err returns the last write's error: nil once a write succeeds again.
func (q *Queue) Err() error {
	q.errMu.Lock()
	defer q.errMu.Unlock()
	return q.err
}

// Sync returns once every entry appended before it was written (or its
// write failed).
func (q *Queue) Sync() {
	synced := make(chan struct{})
	q.mu.RLock()
	if q.closed {
		q.mu.RUnlock()
		return
	}
	q.items <- item{synced: synced}
	q.mu.RUnlock()
	<-synced
}

// Close writes what is queued, stops the goroutine and closes the Log.
// Idempotent.
func (q *Queue) Close() error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.items)
	}
	q.mu.Unlock()
	<-q.done
	q.errMu.Lock()
	defer q.errMu.Unlock()
	if q.log.f == nil {
		return nil
	}
	err := q.log.Close()
	q.log.f = nil
	return err
}
