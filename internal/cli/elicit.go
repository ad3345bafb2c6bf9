package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Answers to a server's elicitation without a person (--elicit).
const (
	elicitDecline  = "decline"
	elicitCancel   = "cancel"
	elicitDefaults = "defaults"
)

// checkElicitMode checks --elicit's value.
func checkElicitMode(mode string) error {
	switch mode {
	case "", elicitDecline, elicitCancel, elicitDefaults:
		return nil
	}
	return usagef("--elicit %q: want decline, cancel or defaults", mode)
}

// answer answers the servers' requests during a one-shot command: an
// elicitation by the person at the terminal, else as --elicit says
// (decline unless told otherwise); sampling with the config's sampling
// entry; anything else is refused.
func (e *env) answer(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
	switch a.Method {
	case tool.AskElicit:
		if e.asksPerson() {
			return e.elicitPerson(ctx, a.Server, a.Params)
		}
		ans, why, err := elicitWithoutPerson(e.elicitMode, a.Params)
		if why != "" {
			fmt.Fprintf(e.Stderr, "mcpbridge: server %q asked for input; declined: %s\n", a.Server, why)
		}
		return ans, err
	case tool.AskSample:
		if e.sampler != nil {
			return e.sampler.Sample(ctx, a.Server, a.Params)
		}
	}
	return nil, fmt.Errorf("mcpbridge does not answer %s here", a.Method)
}

// elicitWithoutPerson answers an elicitation by mode: decline, cancel, or
// accept with each requested field's schema default (fields without one
// are left out); no mode is a decline for want of a terminal. What needs
// a person is declined: a URL elicitation, and a form the defaults do not
// fill (a required field without one). why says why it declined when it
// was not told to ("" when it did not, or --elicit decline said so).
func elicitWithoutPerson(mode string, params json.RawMessage) (answer json.RawMessage, why string, err error) {
	var req struct {
		Mode   string          `json:"mode"`
		Schema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, "", fmt.Errorf("invalid elicitation request: %w", err)
	}
	switch {
	case mode == elicitCancel:
		return json.RawMessage(elicitform.Cancel), "", nil
	case mode == "":
		// Declined for want of a person, not by choice: said, or the
		// tool's answer to the decline reads as the server's doing.
		return json.RawMessage(elicitform.Decline), "no terminal to ask at (stdin and stderr are not both terminals; --elicit defaults or cancel answers otherwise)", nil
	case mode != elicitDefaults:
		return json.RawMessage(elicitform.Decline), "", nil
	case req.Mode == "url":
		return json.RawMessage(elicitform.Decline), "--elicit defaults cannot open a URL (it asks a person to visit one)", nil
	}
	f, err := elicitform.Parse(req.Schema)
	if err != nil {
		return json.RawMessage(elicitform.Decline), fmt.Sprintf("--elicit defaults cannot read the requested form: %v", err), nil
	}
	content := f.Defaults()
	if err := f.Validate(content); err != nil {
		return json.RawMessage(elicitform.Decline), fmt.Sprintf("--elicit defaults: the form's defaults do not make a valid answer (%v); a field without a default needs a person", err), nil
	}
	answer, err = json.Marshal(map[string]any{"action": "accept", "content": content})
	return answer, "", err
}
