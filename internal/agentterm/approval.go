package agentterm

import (
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// Choices is the question's last line: what each key does. The
// server choice is there when the tool has a server.
func Choices(server string) string {
	s := "[y]es once, always this [t]ool"
	if server != "" {
		s += ", always this [s]erver"
	}
	return s + ", [n]o (press the key, no Enter): "
}

// Answer is the answer of a key (or, from a stdin that is no
// terminal, a line); ok false for none.
func Answer(key string, hasServer bool) (agent.Answer, bool) {
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "y", "yes":
		return agent.Once, true
	case "t", "tool":
		return agent.AlwaysTool, true
	case "s", "server":
		return agent.AlwaysServer, hasServer
	case "n", "no":
		return agent.Deny, true
	}
	return agent.Deny, false
}

// Echo is what the person chose, shown after the key (raw mode
// echoes nothing).
func Echo(ans agent.Answer) string {
	switch ans {
	case agent.Once:
		return "yes, once"
	case agent.AlwaysTool:
		return "yes, always this tool"
	case agent.AlwaysServer:
		return "yes, always this server"
	}
	return "no"
}

// maxArgs bounds the arguments shown when a call is asked about.
const maxArgs = 4000

// Args is a call's arguments as the person approving it reads
// them: whole, spaces and all, on one line. Past maxArgs
// characters it says how much is not shown, so that nothing a model padded
// its arguments to hide passes for the whole call.
func Args(args []byte) string {
	s := termsafe.Line(string(args))
	r := []rune(s)
	if len(r) <= maxArgs {
		return s
	}
	return fmt.Sprintf("%s… [%d more characters not shown]", string(r[:maxArgs]), len(r)-maxArgs)
}
