package gateway

import (
	"strings"
	"testing"
	"time"
)

// A forward's signature verifies only for its session, under the
// replicas' secret, within a minute of its time.
func TestCheckForward(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	good := signForward(secret, "s1", now)
	for _, c := range []struct {
		name, sig, session string
		at                 time.Time
		want               string
	}{
		{"signed", good, "s1", now, ""},
		{"a little later", good, "s1", now.Add(50 * time.Second), ""},
		{"another session", good, "s2", now, "only sent by the gateway's replicas"},
		{"another secret", signForward([]byte("other"), "s1", now), "s1", now, "only sent by the gateway's replicas"},
		{"replayed later", good, "s1", now.Add(2 * time.Minute), "is 2m0s old"},
		{"made up", "1800000000.00", "s1", now, "only sent by the gateway's replicas"},
		{"not a signature", "yes", "s1", now, "only sent by the gateway's replicas"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkForward(secret, c.sig, c.session, c.at)
			if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("checkForward = %v, want %q", err, c.want)
			}
		})
	}
}
