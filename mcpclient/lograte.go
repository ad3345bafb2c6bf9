package mcpclient

import (
	"log/slog"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// A server's log messages, and a stdio child's stderr lines, are logged
// at most logLinesPerSecond on average, logLineBurst at once: past that
// they are dropped, and counted, so a server flooding them costs neither
// memory nor a terminal full of lines.
const (
	logLinesPerSecond = 50
	logLineBurst      = 200
)

// logLimit is the rate limit of one server's log messages, or of one
// stdio child's stderr lines.
type logLimit struct {
	lim     *rate.Limiter
	dropped atomic.Int64 // since the last report
	what    string       // the report's message
}

// newLogLimit is a limit whose drops are reported as what.
func newLogLimit(what string) *logLimit {
	return &logLimit{lim: rate.NewLimiter(logLinesPerSecond, logLineBurst), what: what}
}

// allow reports whether one more message may be taken now, counting it as
// dropped when not.
func (l *logLimit) allow() bool {
	if l.lim.Allow() {
		return true
	}
	l.dropped.Add(1)
	return false
}

// report logs how many messages were dropped since the last report, if
// any: before the next message taken, and when a call ends.
func (l *logLimit) report(log *slog.Logger) {
	// Every call ends here: a load leaves the counter's cache line shared
	// among the CPUs, a swap would take it each time.
	if l.dropped.Load() == 0 {
		return
	}
	if n := l.dropped.Swap(0); n > 0 {
		log.Warn(l.what, "dropped", n, "perSecond", logLinesPerSecond, "burst", logLineBurst)
	}
}
