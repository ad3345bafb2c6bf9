package gatewayauth

import (
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// Per-tool limits keep one tool's calls from using another's bucket; an
// identity's buckets are independent of another's.
func TestLimiterPerTool(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLimiter(RateLimit{Rate: 1, Burst: 1, PerTool: true}, func() time.Time { return now })
	for _, c := range []struct {
		key  string
		want bool
	}{{"alice\x00a", true}, {"alice\x00a", false}, {"alice\x00b", true}, {"bob\x00a", true}} {
		if got, _ := l.allow(t.Context(), c.key); got != c.want {
			t.Errorf("allow(%q) = %v, want %v", c.key, got, c.want)
		}
	}
	now = now.Add(time.Second)
	if ok, _ := l.allow(t.Context(), "alice\x00a"); !ok {
		t.Error("a second later the bucket has not refilled")
	}
}

// decodeEntry decodes the config of the one gateway entry of a config
// file's text (the entries' list itself is the host's to check; the
// kind, internal/kinds/gateway, tests that).
func decodeEntry(t *testing.T, file string, lookup func(string) (string, bool)) (Config, error) {
	t.Helper()
	var entries []struct {
		Config yaml.Node `yaml:"config"`
	}
	if err := yaml.Unmarshal([]byte(file), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("want one entry: %d, %v", len(entries), err)
	}
	return Decode(&entries[0].Config, lookup)
}

// questionWaitMs is the gateway's wait for a parked call's answers, and
// the Keeper says it once the entry is applied; without it, the gateway
// keeps its own default (0).
func TestDecodeQuestionWait(t *testing.T) {
	for config, want := range map[string]time.Duration{
		"{questionWaitMs: 2500}":            2500 * time.Millisecond,
		"{audit: {file: '-'}}":              0,
		"{questionWaitMs: 3600000}":         time.Hour,
		"{questionWaitMs: 1, policy: []}":   time.Millisecond,
		"{rateLimit: {perIdentity: 1/s}}":   0,
		"{questionWaitMs: 30000, store: ~}": 30 * time.Second,
	} {
		file := "- id: gw\n  name: gateway\n  config: " + config + "\n"
		cfg, err := decodeEntry(t, file, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("%s: %v", config, err)
		}
		if cfg.QuestionWait != want {
			t.Errorf("%s: QuestionWait %v, want %v", config, cfg.QuestionWait, want)
		}
		k := NewKeeper(Options{})
		if got := k.QuestionWait(); got != 0 {
			t.Errorf("a Keeper with no entry applied says %v, want 0 (the gateway's default)", got)
		}
		if err := k.Apply(t.Context(), cfg, nil); err != nil {
			t.Fatalf("%s: Apply: %v", config, err)
		}
		if got := k.QuestionWait(); got != want {
			t.Errorf("%s: the Keeper says %v, want %v", config, got, want)
		}
		k.Clear(k.Current())
	}
}
