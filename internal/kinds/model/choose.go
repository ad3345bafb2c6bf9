package model

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mcpbridge/mcpbridge/host"
	samplingkind "github.com/mcpbridge/mcpbridge/internal/kinds/sampling"
	"github.com/mcpbridge/mcpbridge/internal/sampling"
)

// IsEntry reports whether pe is a model or a sampling entry: either
// configures the model that answers servers' sampling.
func IsEntry(pe host.PlanEntry) bool {
	return pe.Entry.Name == Name || pe.Entry.Name == samplingkind.Name
}

// Offered reports whether plan runs a model or a sampling entry, valid
// or not: servers are offered sampling.
func Offered(plan *host.Plan) bool {
	return slices.ContainsFunc(plan.Enabled(), IsEntry)
}

// Invalid joins the positioned errors of plan's invalid model and
// sampling entries; nil when there are none.
func Invalid(plan *host.Plan) error {
	var errs []error
	for _, pe := range plan.Entries {
		if IsEntry(pe) && pe.Err != nil {
			errs = append(errs, pe.Err)
		}
	}
	return errors.Join(errs...)
}

// InvalidError is a plan whose model or sampling entry is invalid: the
// agent is not started rather than sent elsewhere.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string {
	return e.Err.Error() + "\nagent: not started, nothing sent: the agent never puts another endpoint in the place of an invalid model or sampling entry"
}
func (e *InvalidError) Unwrap() error { return e.Err }

// DisabledError is a plan whose only model or sampling entry is
// disabled, while no endpoint was given in its place.
type DisabledError struct{ Entry host.Entry }

func (e *DisabledError) Error() string {
	return fmt.Sprintf("agent: %s:%d:%d: entry %q: the %s entry is disabled, and no other entry names the model's endpoint: enable it, pass --base-url, or delete it to use DeepSeek's API",
		e.Entry.File, e.Entry.Line, e.Entry.Column, e.Entry.ID, e.Entry.Name)
}

// Configured is the config of plan's first model entry, else of its last
// sampling entry, else DeepSeek's defaults: those only when the plan has
// neither entry. An invalid entry of either kind is an *InvalidError, and
// a disabled one a *DisabledError unless the endpoint is given
// (baseURLGiven): the entry may have been written to keep the
// conversation on this machine, so nothing is sent elsewhere in its place.
func Configured(plan *host.Plan, baseURLGiven bool) (sampling.Config, error) {
	cfg := sampling.Config{BaseURL: sampling.DefaultBaseURL, BaseURLWritten: sampling.DefaultBaseURL, Model: sampling.DefaultModel,
		APIKeyEnv: sampling.DefaultAPIKeyEnv, Timeout: sampling.DefaultModelTimeout}
	if err := Invalid(plan); err != nil {
		return cfg, &InvalidError{err}
	}
	var disabled *host.PlanEntry
	found := ""
	for _, pe := range plan.Entries {
		if !IsEntry(pe) {
			continue
		}
		c, ok := pe.Spec.Config.(sampling.Config)
		switch {
		case pe.Entry.Disabled:
			disabled = &pe
		case ok && found != Name:
			cfg, found = c, pe.Entry.Name
		}
	}
	if found == "" && disabled != nil && !baseURLGiven {
		return cfg, &DisabledError{disabled.Entry}
	}
	return cfg, nil
}

// Use replaces plan's model and sampling entries by one model entry of
// cfg (id "agent model"), so that servers are sampled through the
// agent's own model.
func Use(plan *host.Plan, cfg sampling.Config) {
	kept := slices.DeleteFunc(slices.Clone(plan.Entries), IsEntry)
	plan.Entries = append(kept, host.PlanEntry{Entry: host.Entry{ID: "agent model", Name: Name}, Spec: Spec(cfg)})
}
