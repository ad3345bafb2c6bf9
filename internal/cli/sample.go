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

// hasSampling reports whether plan runs a sampling entry.
func hasSampling(plan *host.Plan) bool {
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == sampling.KindName {
			return true
		}
	}
	return false
}
