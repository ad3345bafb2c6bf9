package model

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	samplingkind "github.com/mcpbridge/mcpbridge/internal/kinds/sampling"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

// A file holds a model entry beside a sampling entry: the model entry
// takes strict, its spec is the one Spec makes from flags, it shows as a
// model entry, and a second model entry is refused.
func TestModelBesideSampling(t *testing.T) {
	p := sampling.NewProvider()
	opts := samplingkind.KindOptions{Provider: p}
	cat := host.NewCatalog(samplingkind.NewKind(opts), NewKind(opts))
	plan, err := cat.Parse("f.yaml", []byte("- id: m\n  name: model\n  config:\n    model: deepseek-pro\n    strict: true\n- id: s\n  name: sampling\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := plan.Entries[0].Spec
	if d := cmp.Diff(Spec(spec.Config.(sampling.Config)), spec); d != "" {
		t.Errorf("the model entry's spec is not Spec's (-Spec +decoded):\n%s", d)
	}
	in, err := NewKind(opts).Start(context.Background(), spec, host.Env{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if st := in.Status(); st.Name != Name || st.PeerName != "deepseek-pro" {
		t.Errorf("status %+v", st)
	}
	two := "- {id: a, name: model}\n- {id: b, name: model}\n"
	if _, err := cat.Parse("f.yaml", []byte(two), nil); err == nil || !strings.Contains(err.Error(), `name "model" is already used by entry "a"`) {
		t.Errorf("two model entries: %v", err)
	}
}
