package cli

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

const auditHelp = `Checks the hash chain of a gateway audit trail (the gateway entry's audit.file): every
line must carry the SHA-256 of the line before it, and the first line the chain's start, so an
edited, removed or inserted line is found (exit 1, naming the line), and so is a trail whose
first lines were cut. A rotated trail is given as its files, oldest first
(audit verify audit.jsonl.1 audit.jsonl): each must continue the one before. When the older
files are gone, --after takes the hash of the last entry of the one before the first given
(verify prints a trail's last hash). Lines cut short by a crash or a full disk are skipped.
`

// auditCmd runs "audit verify [--after HASH] FILE...".
func (e *env) auditCmd(argv []string) error {
	f, err := parseFlags("audit", specOf("audit"), argv)
	if err != nil {
		return err
	}
	if len(f.args) < 2 || f.args[0] != "verify" {
		return usagef("audit: usage: mcpbridge audit verify [--after HASH] FILE...")
	}
	if b, err := hex.DecodeString(f.after); err != nil || (f.after != "" && len(b) != 32) {
		return usagef("audit verify: --after %q is no SHA-256 hash: give the 64 hex digits verify printed as the last hash of the file before", f.after)
	}
	files := f.args[1:]
	rep, err := audit.VerifyFiles(cmp.Or(f.after, audit.Genesis), files...)
	if err != nil {
		return e.auditFailed(strings.Join(files, ", "), err)
	}
	torn := ""
	if rep.Torn > 0 {
		torn = fmt.Sprintf(" (%d torn lines skipped)", rep.Torn)
	}
	fmt.Fprintf(e.Stdout, "%s: %d entries, chain intact%s, last hash %s\n", strings.Join(files, ", "), rep.Lines, torn, rep.Last)
	for _, name := range rep.Fresh {
		fmt.Fprintf(e.Stdout, "%s begins a chain of its own (the gateway started on it anew): nothing ties the end of the file before it to it\n", name)
	}
	return nil
}

// auditFailed reports why the trail in files did not verify.
func (e *env) auditFailed(files string, err error) error {
	if be, ok := errors.AsType[*audit.BrokenError](err); ok {
		fmt.Fprintf(e.Stderr, "mcpbridge: audit verify: %s:%d: the chain is broken: %s\n", be.File, be.Line, be.Msg)
		return &exitError{ExitFailed}
	}
	if errors.Is(err, audit.ErrNoEntries) {
		fmt.Fprintf(e.Stderr, "mcpbridge: audit verify: %s: %v\n", files, err)
		return &exitError{ExitFailed}
	}
	return fmt.Errorf("audit verify: %w", err)
}
