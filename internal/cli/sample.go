package cli

import (
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// samplingKind is the sampling entry kind of this run: one-shot commands
// answer servers' sampling with it (serve forwards sampling to its client).
func (e *env) samplingKind() *sampling.Kind {
	if e.sampler == nil {
		e.sampler = sampling.NewProvider()
	}
	return sampling.NewKind(sampling.KindOptions{Provider: e.sampler, Lookup: e.lookup})
}

// modelKind is the model entry kind of this run: it answers sampling as
// a sampling entry does, and configures the agent's model.
func (e *env) modelKind() *sampling.Kind {
	e.samplingKind()
	return sampling.NewModelKind(sampling.KindOptions{Provider: e.sampler, Lookup: e.lookup})
}

// hasSampling reports whether plan runs a sampling or a model entry.
func hasSampling(plan *host.Plan) bool {
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == sampling.KindName || pe.Entry.Name == sampling.ModelKind {
			return true
		}
	}
	return false
}
