package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// StopSignals are the signals that end a run as the end of Main's context
// does (serve answers or cancels its calls in flight, stops its servers
// and exits 0): SIGINT, SIGTERM and SIGHUP, a terminal hung up, which
// would otherwise kill the process with its calls unanswered. SIGHUP
// ignored at start (nohup) stays ignored: a handler would undo it.
func StopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}
