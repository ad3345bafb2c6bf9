package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sys/unix"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
)

// StateDir is where mcpbridge keeps its state: $XDG_STATE_HOME/mcpbridge,
// else ~/.local/state/mcpbridge. lookup reads the environment.
func StateDir(lookup func(string) (string, bool)) (string, error) {
	if d, ok := lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpbridge"), nil
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		return "", errors.New("neither XDG_STATE_HOME nor HOME is set: no place for OAuth tokens")
	}
	return filepath.Join(home, ".local", "state", "mcpbridge"), nil
}

// Store keeps OAuth tokens in files: a 0700 directory of 0600 files, one
// per (resource, client), each beside a lock file that fences refreshes
// across processes. Safe for concurrent use by goroutines and processes.
type Store struct {
	dir string
}

// OpenStore opens (creating them 0700) stateDir and its oauth directory,
// and tightens their mode when it is looser.
func OpenStore(stateDir string) (*Store, error) {
	dir := filepath.Join(stateDir, "oauth")
	for _, d := range []string{stateDir, dir} {
		err := os.MkdirAll(d, 0o700)
		if err == nil {
			err = os.Chmod(d, 0o700)
		}
		if err != nil {
			return nil, fmt.Errorf("token store: %w (OAuth tokens are kept in %s: make it a directory you can write, or set XDG_STATE_HOME to one)", err, stateDir)
		}
	}
	return &Store{dir: dir}, nil
}

// Record is one stored grant: what a refresh needs, and the token.
type Record struct {
	// Resource is the MCP server URL; Client the configured client
	// (clientId, metadata URL, or "dynamic"); Issuer the authorization
	// server, when known.
	Resource string `json:"resource"`
	Client   string `json:"client"`
	Issuer   string `json:"issuer,omitempty"`
	// ClientID and ClientSecret are the client as registered (a dynamic
	// registration's included), TokenURL and AuthStyle how to reach the
	// token endpoint.
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"`
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
	// DPoPKey is the key a DPoP-bound Token (and its refresh token) is
	// bound to; nil for a Bearer token.
	DPoPKey *dpopKey `json:"dpopKey,omitempty"`
	// Saved is when the record was written.
	Saved time.Time `json:"saved"`
}

// oauthConfig is what refreshing the record's token needs.
func (r *Record) oauthConfig() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
		Scopes:       r.Scopes,
	}
}

// Key names the record of a resource and a client identity.
func Key(resource string, cfg *Config) string {
	sum := sha256.Sum256([]byte(resource + "\n" + cfg.clientIdentity()))
	return hex.EncodeToString(sum[:16])
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key+".json") }

// Load returns the record under key, or nil when there is none.
func (s *Store) Load(key string) (*Record, error) {
	data, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.Token == nil {
		return nil, fmt.Errorf("token store: %s is damaged; run mcpbridge logout to remove it", s.path(key))
	}
	return &r, nil
}

// Save writes the record under key atomically (atomicfile.Write: a 0600
// temporary file, synced, renamed over the old one, the directory
// synced): a crash leaves the old record or the new one, never an empty
// file in place of a rotated refresh token.
func (s *Store) Save(key string, r *Record) error {
	r.Saved = time.Now().UTC()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("token store: %w", err) // untested: a Record always marshals
	}
	if err := atomicfile.Write(s.path(key), data, 0o600); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// Delete removes the record under key; a missing one is not an error. It
// reports whether there was one. The key's lock file stays: another
// process may hold or wait for its lock, and a new file in its place
// would let a third take a lock of its own beside it.
func (s *Store) Delete(key string) (bool, error) {
	err := os.Remove(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("token store: %w", err)
	}
	return true, nil
}

// Lock takes the exclusive lock of key, waiting for another process (or
// goroutine) that holds it, until ctx ends. unlock releases it.
func (s *Store) Lock(ctx context.Context, key string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, key+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("token store: locking: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("token store: waiting for another mcpbridge's refresh: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
