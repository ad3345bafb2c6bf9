package mcpclient

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNextStep(t *testing.T) {
	p := ReconnectPolicy{Enabled: true, MaxAttempts: 3, InitialDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	off := p
	off.Enabled = false
	tests := []struct {
		name     string
		policy   ReconnectPolicy
		oneShot  bool
		failures int
		lost     bool
		up       time.Duration
		want     step
	}{
		{"first failure backs off the initial delay", p, false, 0, false, 0, step{verdict: retry, failures: 1, delay: 100 * time.Millisecond}},
		{"backoff doubles", p, false, 1, false, 0, step{verdict: retry, failures: 2, delay: 200 * time.Millisecond}},
		{"last attempt of the budget", p, false, 2, false, 0, step{verdict: retry, failures: 3, delay: 400 * time.Millisecond}},
		{"budget spent gives up", p, false, 3, false, 0, step{verdict: giveUp, failures: 4}},
		{"a short-lived connection keeps counting", p, false, 3, true, 999 * time.Millisecond, step{verdict: giveUp, failures: 4}},
		{"a connection up for MaxDelay resets the budget", p, false, 3, true, time.Second, step{verdict: retry, failures: 1, delay: 100 * time.Millisecond}},
		{"one-shot never retries", p, true, 0, false, 0, step{verdict: stopFailed}},
		{"one-shot lost connection", p, true, 0, true, time.Hour, step{verdict: stopFailed}},
		{"reconnect disabled", off, false, 0, true, 0, step{verdict: stopFailed}},
		{"delay capped at MaxDelay", ReconnectPolicy{Enabled: true, MaxAttempts: 100, InitialDelay: time.Second, MaxDelay: 3 * time.Second}, false, 10, false, 0, step{verdict: retry, failures: 11, delay: 3 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nextStep(tt.policy, tt.oneShot, tt.failures, tt.lost, tt.up)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Errorf("nextStep (-want +got):\n%s", diff)
			}
		})
	}
}
