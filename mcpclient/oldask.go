package mcpclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/tool"
)

// On protocol 2026-07-28 a server asks its client only through
// input-required results (multi round-trip); one written for 2025-11-25
// that sends elicitation/create, sampling/createMessage or roots/list in
// the middle of a call fails with its SDK's error, which names the method
// but not the fix. The bridge adds it: the entry's protocolVersion.

// oldAskMethods are the requests 2026-07-28 no longer lets a server send.
var oldAskMethods = []string{"elicitation/create", "sampling/createMessage", "roots/list"}

// asksOldWay reports whether msg, the failure of a call on a session of
// protocol 2026-07-28 or later, says the server tried to ask the old way.
func asksOldWay(msg string) bool {
	for _, m := range oldAskMethods {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// protocolHint is the fix an entry's user can make.
func (s *Server) protocolHint() string {
	return fmt.Sprintf(" (server %q asked its client mid-call the 2025-11-25 way, which protocol 2026-07-28 does not allow: set protocolVersion: \"2025-11-25\" on its entry)", s.cfg.ServerName)
}

// hintOldAsk adds protocolHint to err, a failed call on gen, when the
// server asked the old way on the newer protocol.
func (s *Server) hintOldAsk(gen *generation, err error) error {
	if err == nil || !listens(gen) || !asksOldWay(err.Error()) {
		return err
	}
	var te *tool.ToolError
	if errors.As(err, &te) {
		return &tool.ToolError{Message: te.Message + s.protocolHint(), Wire: te.Wire}
	}
	if wire, ok := errors.AsType[*jsonrpc.Error](err); ok {
		// The server's error with the fix in its message: a gateway
		// forwards it, and its client reads the fix too.
		return &serverError{err.Error() + s.protocolHint(), &jsonrpc.Error{Code: wire.Code, Message: wire.Message + s.protocolHint(), Data: wire.Data}}
	}
	return fmt.Errorf("%w%s", err, s.protocolHint())
}

// hintRetries says why a call failed with the multi round-trip give-up
// (multiRoundTrip: ten rounds): the server asked again after every
// answer, as a server that insists on an accepted form does when its
// client declines, or cannot be asked and is declined for.
func (s *Server) hintRetries(err error) error {
	if err == nil || !strings.Contains(err.Error(), "multi-round-trip: exceeded maximum") {
		return err
	}
	return fmt.Errorf("%w (server %q asked for input again after every answer: its client declined, could not be asked, or gave answers the server does not accept)", err, s.cfg.ServerName)
}
