package agentsession_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentsession"
)

func lookupOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDir(t *testing.T) {
	got, err := agentsession.Dir(lookupOf(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}))
	if err != nil || got != filepath.FromSlash("/s/mcpbridge/sessions") {
		t.Errorf("with XDG_STATE_HOME: %q, %v", got, err)
	}
	got, err = agentsession.Dir(lookupOf(map[string]string{"HOME": "/h"}))
	if err != nil || got != filepath.FromSlash("/h/.local/state/mcpbridge/sessions") {
		t.Errorf("with HOME alone: %q, %v", got, err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	if _, err := agentsession.Open(dir, "", true, time.Now()); !isChoice(err, "--continue") {
		t.Errorf("--continue with no session: %v, want a --continue ChoiceError", err)
	}
	if _, err := agentsession.Open(dir, "nope", false, time.Now()); !isChoice(err, "--resume") {
		t.Errorf("--resume of a missing session: %v, want a --resume ChoiceError", err)
	}
	// Where it was looked for: a run under another HOME or XDG_STATE_HOME
	// (sudo, a container) looks in another directory.
	if _, err := agentsession.Open(dir, "nope", false, time.Now()); err == nil || !strings.Contains(err.Error(), "no saved session nope in "+dir) {
		t.Errorf("--resume of a missing session: %v, want it to say where it looked", err)
	}
	s, err := agentsession.Open(dir, "", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID
	if err := s.Append(agent.Message{Role: "user", Content: "hi"}); err != nil { // --continue passes over an empty session
		t.Fatal(err)
	}
	s.Close()
	for _, c := range []struct {
		id     string
		latest bool
	}{{id, false}, {"", true}} {
		s, err := agentsession.Open(dir, c.id, c.latest, time.Now())
		if err != nil || s.ID != id {
			t.Fatalf("Open(%q, latest %v): %v, want session %s", c.id, c.latest, err, id)
		}
		s.Close()
	}
}

func isChoice(err error, flag string) bool {
	var ce *agentsession.ChoiceError
	return errors.As(err, &ce) && ce.Flag == flag
}
