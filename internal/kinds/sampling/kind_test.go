package sampling

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

// A config file holds one sampling entry; its fields are checked with
// their positions; defaults are DeepSeek's.
func TestDecode(t *testing.T) {
	cat := host.NewCatalog(NewKind(KindOptions{Provider: sampling.NewProvider()}))
	lookup := func(k string) (string, bool) { return map[string]string{"URL": "ftp://x"}[k], k == "URL" }
	plan, err := cat.Parse("f.yaml", []byte("- id: s\n  name: sampling\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := sampling.Config{BaseURL: sampling.DefaultBaseURL, Model: sampling.DefaultModel, APIKeyEnv: sampling.DefaultAPIKeyEnv, Timeout: sampling.DefaultTimeout, BaseURLWritten: sampling.DefaultBaseURL}
	if d := cmp.Diff(want, plan.Entries[0].Spec.Config); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
	for _, c := range []struct{ name, file, want string }{
		{"two entries", "- id: a\n  name: sampling\n- id: b\n  name: sampling\n", `name "sampling" is already used by entry "a"`},
		{"bad fields", "- id: a\n  name: sampling\n  config:\n    baseURL: ${URL}\n    apiKeyEnv: 'MY KEY'\n    maxTokens: 0\n    modle: x\n",
			"f.yaml:4:14: entry \"a\": config.baseURL: must be an absolute http(s) URL (the scheme is not http or https)"},
		{"bad key name", "- id: a\n  name: sampling\n  config:\n    apiKeyEnv: 'MY KEY'\n", `config.apiKeyEnv: must name an environment variable`},
		{"typo", "- id: a\n  name: sampling\n  config:\n    modle: x\n", `unknown key "modle" (did you mean "model"?)`},
		{"credentials", "- id: a\n  name: sampling\n  config:\n    baseURL: https://u:p@h\n    timeoutMs: 0\n", "must not hold credentials"},
		{"not a mapping", "- id: a\n  name: sampling\n  config: [1]\n", "must be a mapping"},
		{"empty baseURL", "- id: a\n  name: sampling\n  config:\n    baseURL: ${EMPTY:-}\n", `f.yaml:4:14: entry "a": config.baseURL: is empty (after ${VAR} expansion, if it has one): name the endpoint, or leave baseURL out for DeepSeek's API`},
		{"no key without baseURL", "- id: a\n  name: sampling\n  config:\n    apiKeyEnv: \"\"\n", `f.yaml:4:16: entry "a": config.apiKeyEnv: no key needs a baseURL too: without one the requests go to DeepSeek's API (https://api.deepseek.com), which needs a key`},
		{"apiKey none without baseURL", "- id: a\n  name: sampling\n  config:\n    apiKey: none\n", `f.yaml:4:13: entry "a": config.apiKey: no key needs a baseURL too`},
		{"a key in the file", "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1\n    apiKey: sk-123\n", `f.yaml:5:13: entry "a": config.apiKey: takes only "none" (the endpoint takes no key): a key is never written in the file; name the variable that holds it in apiKeyEnv`},
		{"no key and a key", "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1\n    apiKey: none\n    apiKeyEnv: K\n", `config.apiKey: none says the endpoint takes no key, but apiKeyEnv names K: keep one of them`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cat.Parse("f.yaml", []byte(c.file), lookup)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "ftp://x") {
				t.Errorf("an expanded value was quoted: %v", err)
			}
		})
	}
	good := "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1/v1\n    model: m\n    apiKeyEnv: K\n    maxTokens: 5\n    timeoutMs: 10\n"
	if plan, err := cat.Parse("f.yaml", []byte(good), lookup); err != nil || plan.Entries[0].Spec.Config.(sampling.Config).Timeout != 10*time.Millisecond {
		t.Errorf("a full config: %v", err)
	}
	for _, key := range []string{`apiKeyEnv: ""`, "apiKey: none", "apiKey: none\n    apiKeyEnv: \"\""} {
		keyless := "- id: a\n  name: sampling\n  config:\n    baseURL: http://127.0.0.1:1/v1\n    " + key + "\n"
		if plan, err := cat.Parse("f.yaml", []byte(keyless), lookup); err != nil || plan.Entries[0].Spec.Config.(sampling.Config).APIKeyEnv != "" {
			t.Errorf("%s: %v", key, err)
		}
	}
}

// An entry is ready at once and shows its model; closed, it says so and
// stops answering. A spec another kind decoded is refused.
func TestInstance(t *testing.T) {
	p := sampling.NewProvider()
	k := NewKind(KindOptions{Provider: p})
	env := host.Env{Logger: slog.New(slog.DiscardHandler)}
	in, err := k.Start(context.Background(), Spec(Name, sampling.Config{Model: "m", Timeout: time.Second}), env)
	if err != nil {
		t.Fatal(err)
	}
	<-in.Ready()
	if st := in.Status(); st.State != host.StateReady || st.Name != Name || st.PeerName != "m" || in.StartErr() != nil {
		t.Errorf("status %+v", st)
	}
	in.Close()
	if st := in.Status(); st.State != host.StateClosed {
		t.Errorf("closed: status %+v", st)
	}
	if _, err := p.Sample(context.Background(), "s", nil); err != sampling.ErrNotConfigured {
		t.Errorf("after Close: %v", err)
	}
	if _, err := k.Start(context.Background(), host.Spec{Config: "x"}, env); err == nil {
		t.Error("a foreign spec was started")
	}
}
