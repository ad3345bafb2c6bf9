// Package agentsession keeps the agent's sessions where a person finds
// them again: $XDG_STATE_HOME/mcpbridge/sessions, one file per session
// (agent.Session), and chooses the one a run continues: a new one, the
// one named (--resume), or the one used last (--continue).
package agentsession

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
)

// Dir is $XDG_STATE_HOME/mcpbridge/sessions (~/.local/state when unset),
// lookup reading the environment.
func Dir(lookup func(string) (string, bool)) (string, error) {
	state, _ := lookup("XDG_STATE_HOME")
	if state == "" {
		home, _ := lookup("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", errors.New("agent: no directory for sessions: set XDG_STATE_HOME or HOME")
			}
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "mcpbridge", "sessions"), nil
}

// ChoiceError is a session named that cannot be opened: the command
// line's mistake, Flag the flag that named it.
type ChoiceError struct {
	Flag string // "--resume" or "--continue"
	Err  error
}

func (e *ChoiceError) Error() string { return fmt.Sprintf("agent: %s: %v", e.Flag, e.Err) }
func (e *ChoiceError) Unwrap() error { return e.Err }

// Open creates a session in dir, started now, or opens session id, or
// with latest the one of dir used last (agent.Latest). A session that
// cannot be found or read is a *ChoiceError.
func Open(dir, id string, latest bool, now time.Time) (*agent.Session, error) {
	if latest {
		var err error
		if id, err = agent.Latest(dir); err != nil {
			return nil, &ChoiceError{"--continue", err}
		}
	}
	if id == "" {
		return agent.NewSession(dir, now)
	}
	s, err := agent.OpenSession(dir, id)
	if err != nil {
		return nil, &ChoiceError{"--resume", err}
	}
	return s, nil
}
