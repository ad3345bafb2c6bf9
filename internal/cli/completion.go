package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpbridge/mcpbridge/internal/completion"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
)

// The completion scripts (internal/completion) are generated from the
// command table (commands, commandSpecs, flagDefs): each command's own
// flags, and the names only a running config knows (tools, prompts,
// resource URIs, entries) from the hidden '__complete KIND WORDS...'.

// dynamicArgs says what completes the arguments of a command: a
// __complete kind, or a fixed list.
func dynamicArgs() map[string]string {
	return map[string]string{
		"call": "tools", "tools": "tools", "prompt": "prompts", "read": "uris",
		"get": "entries", "remove": "servers", "logout": "servers", "login": "servers",
	}
}

// flagChoices are the values a flag takes, for completion.
func flagChoices() map[string]string {
	return map[string]string{
		"--transport": "http sse stdio", "--scope": "local project user", "-s": "local project user",
		"--elicit": "cancel decline defaults", "--log-format": "json text",
		"--package": "mcpb npm nuget oci pypi",
	}
}

// completion prints the completion script of a shell.
func (e *env) completion(argv []string) error {
	if len(argv) != 1 {
		return usagef("completion: want bash, zsh or fish")
	}
	spec := completionSpec(e.progName())
	switch argv[0] {
	case "bash":
		fmt.Fprint(e.Stdout, completion.Bash(spec))
	case "zsh":
		fmt.Fprint(e.Stdout, completion.Zsh(spec))
	case "fish":
		fmt.Fprint(e.Stdout, completion.Fish(spec))
	default:
		return usagef("completion: unknown shell %q (want bash, zsh or fish)", argv[0])
	}
	return nil
}

// progName is the name this binary was run as.
func (e *env) progName() string {
	if e.Prog != "" {
		return e.Prog
	}
	return filepath.Base(os.Args[0])
}

// completionSpec is the command table (commands, commandSpecs, flagDefs)
// as the completion scripts offer it, for the name prog.
func completionSpec(prog string) completion.Spec {
	spec := completion.Spec{Prog: prog, Choices: flagChoices(), Dynamic: dynamicArgs()}
	for _, c := range commands() {
		names, _ := flagsOf(c.name)
		spec.Commands = append(spec.Commands, completion.Command{Name: c.name, Summary: c.summary, Flags: names})
	}
	global, _ := flagsOf("")
	spec.Global = append(global, "--version")
	for _, def := range flagDefs() {
		spec.Flags = append(spec.Flags, completion.Flag{Names: def.names, Value: def.value, Commands: commandsTaking(def)})
	}
	return spec
}

// commandsTaking are the commands that take def's flag: nil for all of
// them (a global flag).
func commandsTaking(def flagDef) []string {
	cmds := []string{} // none is not all
	all := true
	for _, c := range commands() {
		if def.accept(specOf(c.name)) {
			cmds = append(cmds, c.name)
		} else {
			all = false
		}
	}
	if all {
		return nil
	}
	return cmds
}

// completeNames is the hidden '__complete KIND [WORDS...]' the scripts
// run: for KIND tools, prompts or uris, those of the SOURCE among WORDS
// (the command line typed so far; its servers are started); for entries,
// the ids of the configured entries, for servers those of the servers'
// (mcp-client) entries alone (nothing started). One a line. Other
// words, and flags it does not know, are ignored: the line is half
// written.
func (e *env) completeNames(ctx context.Context, argv []string) error {
	kinds := []string{"tools", "prompts", "uris", "entries", "servers"}
	if len(argv) == 0 || !slices.Contains(kinds, argv[0]) {
		return usagef("__complete: want %s", strings.Join(kinds, ", "))
	}
	f, err := parseFlags("__complete", flagSpec{source: true}, sourceWords(argv[1:]))
	if err != nil {
		return err
	}
	e.quiet = true
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	if argv[0] == "entries" || argv[0] == "servers" {
		for _, pe := range src.plan.Entries {
			if argv[0] == "entries" || pe.Entry.Name == clientkind.Name {
				fmt.Fprintln(e.Stdout, pe.Entry.ID)
			}
		}
		return nil
	}
	f.json = true // no connection spinner in a completion
	b, err := e.open(ctx, src, f)
	if err != nil {
		return err
	}
	defer b.close()
	for _, name := range registryNames(b, argv[0]) {
		// A name is a line to the scripts: one holding a line break (a
		// server's URI may) would be two, and no name with a control
		// character is one to type.
		if !strings.ContainsFunc(name, unicode.IsControl) {
			fmt.Fprintln(e.Stdout, name)
		}
	}
	return nil
}

// sourceWords keeps the SOURCE flags of a half-typed command line.
func sourceWords(words []string) []string {
	var kept []string
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "--config", "--url", "--name", "--header", "-H":
			if i+1 < len(words) {
				kept = append(kept, words[i], words[i+1])
				i++
			}
		}
	}
	return kept
}

// registryNames are the tool names, prompt names or resource URIs (and
// templates) of b.
func registryNames(b *bridge, kind string) []string {
	var out []string
	switch kind {
	case "tools":
		for _, t := range b.reg.List() {
			out = append(out, t.Name)
		}
	case "prompts":
		for _, p := range b.reg.Prompts() {
			out = append(out, p.Name)
		}
	case "uris":
		for _, r := range b.reg.Resources() {
			out = append(out, r.URI)
		}
		for _, t := range b.reg.ResourceTemplates() {
			out = append(out, t.URITemplate)
		}
	}
	return out
}
