package cli

import (
	"github.com/mcpbridge/mcpbridge/host"
	modelkind "github.com/mcpbridge/mcpbridge/internal/kinds/model"
	samplingkind "github.com/mcpbridge/mcpbridge/internal/kinds/sampling"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// provider is the sampling provider of this run, made on first use.
func (e *env) provider() *sampling.Provider {
	if e.sampler == nil {
		e.sampler = sampling.NewProvider()
	}
	return e.sampler
}

// samplingOptions are the options of this run's sampling and model kinds.
func (e *env) samplingOptions() samplingkind.KindOptions {
	return samplingkind.KindOptions{Provider: e.provider(), Options: sampling.Options{Lookup: e.lookup, HTTPClient: e.HTTPClient}}
}

// samplingKind is the sampling entry kind of this run: one-shot commands
// answer servers' sampling with it (serve forwards sampling to its client).
func (e *env) samplingKind() *samplingkind.Kind {
	return samplingkind.NewKind(e.samplingOptions())
}

// modelKind is the model entry kind of this run: it answers sampling as
// a sampling entry does, and configures the agent's model.
func (e *env) modelKind() *samplingkind.Kind {
	return modelkind.NewKind(e.samplingOptions())
}

// settleSampling decides, before plan starts, whether servers are offered
// sampling (plan has a sampling or a model entry, valid or not) and
// whether it is refused: an invalid entry of either kind fails every
// request with its positioned error rather than let another endpoint
// answer in its place.
func (e *env) settleSampling(plan *host.Plan) {
	e.sampling = modelkind.Offered(plan)
	e.provider().Refuse(modelkind.Invalid(plan))
}
