// Package model is the model entry kind (`name: model`): the sampling
// entry's config plus strict, configuring the agent's model and answering
// sampling in the sampling entry's place when a file has both. It is the
// sampling kind (internal/kinds/sampling) under this name.
package model

import (
	"github.com/mcpbridge/mcpbridge/host"
	samplingkind "github.com/mcpbridge/mcpbridge/internal/kinds/sampling"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// Name is the entry name of the model kind.
const Name = sampling.ModelKind

// NewKind returns the model kind.
func NewKind(opts samplingkind.KindOptions) *samplingkind.Kind {
	return samplingkind.Named(Name, opts)
}

// Spec returns the spec of a model entry with cfg, as the kind's Decode
// would have made it: for a command that settles its model from flags.
func Spec(cfg sampling.Config) host.Spec { return samplingkind.Spec(Name, cfg) }
