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
