package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

const auditHelp = `Checks the hash chain of a gateway audit trail (the gateway entry's audit.file): every
line must carry the SHA-256 of the line before it, so an edited, removed or inserted line
is found (exit 1, naming the line). Lines torn by a crash are reported and skipped.
`

// auditCmd runs "audit verify FILE".
func (e *env) auditCmd(argv []string) error {
	if len(argv) != 2 || argv[0] != "verify" {
		return usagef("audit: usage: mcpbridge audit verify FILE")
	}
	f, err := os.Open(argv[1])
	if err != nil {
		return fmt.Errorf("audit verify: %w", err)
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if be, ok := errors.AsType[*audit.BrokenError](err); ok {
		fmt.Fprintf(e.Stderr, "mcpbridge: audit verify: %s:%d: the chain is broken: %s\n", argv[1], be.Line, be.Msg)
		return &exitError{ExitFailed}
	}
	if err != nil {
		return fmt.Errorf("audit verify: %s: %w", argv[1], err)
	}
	torn := ""
	if rep.Torn > 0 {
		torn = fmt.Sprintf(" (%d torn lines skipped)", rep.Torn)
	}
	fmt.Fprintf(e.Stdout, "%s: %d entries, chain intact%s\n", argv[1], rep.Lines, torn)
	return nil
}
