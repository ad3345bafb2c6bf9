package model

import (
	"errors"
	"testing"

	"github.com/mcpbridge/mcpbridge/host"
	samplingkind "github.com/mcpbridge/mcpbridge/internal/kinds/sampling"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

func parse(t *testing.T, config string) *host.Plan {
	t.Helper()
	opts := samplingkind.KindOptions{Provider: sampling.NewProvider()}
	plan, err := host.NewCatalog(samplingkind.NewKind(opts), NewKind(opts)).ParseIsolated("f.yaml", []byte(config), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// The model entry wins over the sampling entry; neither is DeepSeek's
// defaults; an invalid entry, or a disabled one with no endpoint given,
// is never replaced by another endpoint.
func TestConfigured(t *testing.T) {
	both := parse(t, "- {id: s, name: sampling, config: {model: from-sampling}}\n- {id: m, name: model, config: {model: from-model}}\n")
	if cfg, err := Configured(both, false); err != nil || cfg.Model != "from-model" {
		t.Errorf("model and sampling: %q, %v", cfg.Model, err)
	}
	if cfg, err := Configured(&host.Plan{}, false); err != nil || cfg.Model != sampling.DefaultModel || cfg.BaseURL != sampling.DefaultBaseURL {
		t.Errorf("neither: %+v, %v", cfg, err)
	}
	invalid := parse(t, "- {id: m, name: model, config: {modle: x}}\n")
	if _, err := Configured(invalid, true); !errors.As(err, new(*InvalidError)) {
		t.Errorf("invalid: %v, want an InvalidError", err)
	}
	disabled := parse(t, "- {id: m, name: model, disabled: true, config: {model: local}}\n")
	if _, err := Configured(disabled, false); !errors.As(err, new(*DisabledError)) {
		t.Errorf("disabled: %v, want a DisabledError", err)
	}
	if _, err := Configured(disabled, true); err != nil {
		t.Errorf("disabled, the endpoint given: %v", err)
	}
	if !Offered(both) || Offered(&host.Plan{}) || Invalid(invalid) == nil || Invalid(both) != nil {
		t.Error("Offered or Invalid is wrong")
	}
	Use(both, sampling.Config{Model: "agent"})
	if len(both.Entries) != 1 || both.Entries[0].Entry.Name != Name || both.Entries[0].Spec.Config.(sampling.Config).Model != "agent" {
		t.Errorf("Use left %+v", both.Entries)
	}
}
