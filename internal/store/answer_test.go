package store_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// A store that answers, but not with a working connection, says what it
// answered and how to fix the url, never that it does not answer: a
// wrong password, none where one is required, a database the server
// does not have, a port where HTTP answers. Each said "does not answer:"
// followed by Redis's own reply.
func TestRedisStartSaysWhatTheServerAnswered(t *testing.T) {
	srv := mcptest.StartRedisArgs(t, "--requirepass", "right-pw")
	web := httptest.NewServer(nil)
	defer web.Close()
	base := "redis://127.0.0.1:" + strings.TrimPrefix(srv.Addr(), "127.0.0.1:")
	for _, c := range []struct {
		name, url string
		want      []string
	}{
		{"a wrong password", strings.Replace(base, "redis://", "redis://:wrong-pw@", 1) + "/0",
			[]string{"answered WRONGPASS", "check the password (and the ACL user, if the url names one)"}},
		{"no password", base + "/0",
			[]string{"answered NOAUTH", "requires a password", "redis://:${REDIS_PASSWORD}@HOST:PORT"}},
		{"a database the server lacks", strings.Replace(base, "redis://", "redis://:right-pw@", 1) + "/99",
			[]string{"answered ERR DB index is out of range", "the url's /99 is out of range for this server's databases setting"}},
		{"an HTTP port", strings.Replace(web.URL, "http://", "redis://", 1) + "/0",
			[]string{"answers HTTP, not Redis", "check the url's port"}},
	} {
		_, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: c.url})
		if err == nil {
			t.Errorf("%s: opened", c.name)
			continue
		}
		msg := err.Error()
		for _, want := range c.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", c.name, msg, want)
			}
		}
		if strings.Contains(msg, "does not answer") || strings.Contains(msg, "pw") {
			t.Errorf("%s: %q says the store does not answer, or shows the password", c.name, msg)
		}
	}
	if _, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: strings.Replace(base, "redis://", "redis://:right-pw@", 1) + "/0"}); err != nil {
		t.Errorf("the right password: %v", err)
	}
}
