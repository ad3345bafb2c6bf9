package oauth

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// StoresTokens reports whether c's grant is the authorization code, the
// one whose tokens are stored (a nil c: the default, which is).
func (c *Config) StoresTokens() bool { return c.grant() == GrantAuthorizationCode }

// Stored reports whether the state directory holds tokens for the server
// at resource with client settings cfg.
func Stored(stateDir, resource string, cfg *Config) bool {
	store, err := OpenStore(stateDir)
	if err != nil {
		return false
	}
	rec, err := store.Load(Key(resource, cfg))
	return err == nil && rec != nil
}

// Forget deletes the tokens Stored finds (a logout); it reports whether
// there were any. It waits (until ctx ends, a minute at most) for a
// refresh another process has under way, which would otherwise store the
// grant again after it.
func Forget(ctx context.Context, stateDir, resource string, cfg *Config) (bool, error) {
	store, err := OpenStore(stateDir)
	if err != nil {
		return false, err
	}
	key := Key(resource, cfg)
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	unlock, err := store.Lock(ctx, key)
	if err != nil {
		return false, err
	}
	defer unlock()
	return store.Delete(key)
}

// Browsers opens a login's URL for a person and waits, at the end, a
// little for the commands it started. Its zero value is ready; Open is
// safe for concurrent use; Wait is called once, after the last Open.
type Browsers struct {
	mu     sync.Mutex
	exited []chan struct{}
}

// browserWait bounds the wait for a browser command at the end of a login
// (xdg-open hands over and exits; a browser run directly may stay).
const browserWait = 5 * time.Second

// Open opens url in $BROWSER, else the desktop's opener when there is a
// display (DISPLAY or WAYLAND_DISPLAY); without either it does nothing,
// and the printed URL is the way. getenv reads the environment the
// command is given (environ; nil: the process's).
func (b *Browsers) Open(getenv func(string) string, environ []string, url string) error {
	var cmd *exec.Cmd
	if br := getenv("BROWSER"); br != "" {
		fields := strings.Fields(br)
		cmd = exec.Command(fields[0], append(fields[1:], url)...)
	} else if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" {
		cmd = exec.Command("xdg-open", url)
	} else {
		return nil
	}
	cmd.Env = environ
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Wait()
	}()
	b.mu.Lock()
	b.exited = append(b.exited, exited)
	b.mu.Unlock()
	return nil
}

// Wait waits a little (five seconds at most) for the commands Open
// started to exit.
func (b *Browsers) Wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	deadline := time.After(browserWait)
	for _, ch := range b.exited {
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}
