package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The completion scripts are generated from the command table (commands,
// commandSpecs, flagDefs): each command's own flags, and the names only a
// running config knows (tools, prompts, resource URIs, entries) from the
// hidden '__complete KIND WORDS...'. They register for the name the binary
// was run as and call back the command as typed.

// dynamicArgs says what completes the arguments of a command: a
// __complete kind, or a fixed list.
func dynamicArgs() map[string]string {
	return map[string]string{
		"call": "tools", "tools": "tools", "prompt": "prompts", "read": "uris",
		"get": "entries", "remove": "entries", "logout": "entries", "login": "entries",
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
	prog := e.progName()
	switch argv[0] {
	case "bash":
		fmt.Fprint(e.Stdout, bashScript(prog))
	case "zsh":
		fmt.Fprint(e.Stdout, zshScript(prog))
	case "fish":
		fmt.Fprint(e.Stdout, fishScript(prog))
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

// funcName is a shell function name made of prog.
func funcName(prog string) string {
	return "_" + strings.Map(func(r rune) rune {
		if r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, prog)
}

// allFlags is every flag of every command, "|"-joined, by whether it
// takes a value (for the scripts' case patterns); files are those whose
// value is a file or directory.
func allFlags() (valued, files []string) {
	for _, def := range flagDefs() {
		for _, n := range def.names {
			name := "--" + n
			if len(n) == 1 {
				name = "-" + n
			}
			switch def.value {
			case "":
			case "FILE", "DIR":
				files = append(files, name)
				valued = append(valued, name)
			default:
				valued = append(valued, name)
			}
		}
	}
	return valued, files
}

// commandFlagWords is, per command ("" for none yet), the flags to offer.
func commandFlagWords() map[string]string {
	out := map[string]string{}
	for _, c := range commands() {
		names, _ := flagsOf(c.name)
		out[c.name] = strings.Join(names, " ")
	}
	global, _ := flagsOf("")
	out[""] = strings.Join(append(global, "--version"), " ")
	return out
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// sortedKeys returns m's keys in order, so the scripts are stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func bashScript(prog string) string {
	valued, files := allFlags()
	var b strings.Builder
	fn := funcName(prog)
	fmt.Fprintf(&b, "# bash completion for %s: source <(%s completion bash)\n%s() {\n", prog, prog, fn)
	b.WriteString(`  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i words IFS=$' \t\n'` + "\n")
	fmt.Fprintf(&b, "  for ((i = 1; i < COMP_CWORD; i++)); do\n    case \"${COMP_WORDS[i]}\" in\n      %s) ((i++)) ;;\n      -*) ;;\n      *) cmd=\"${COMP_WORDS[i]}\"; break ;;\n    esac\n  done\n", strings.Join(valued, "|"))
	fmt.Fprintf(&b, "  case \"$prev\" in\n    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", strings.Join(files, "|"))
	for _, f := range sortedKeys(flagChoices()) {
		fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", f, flagChoices()[f])
	}
	fmt.Fprintf(&b, "    %s) return ;;\n  esac\n", strings.Join(valued, "|"))
	b.WriteString("  if [[ \"$cur\" == -* ]]; then\n    case \"$cmd\" in\n")
	words := commandFlagWords()
	for _, c := range sortedKeys(words) {
		if c != "" {
			fmt.Fprintf(&b, "      %s) words=%q ;;\n", c, words[c])
		}
	}
	fmt.Fprintf(&b, "      *) words=%q ;;\n    esac\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")); return\n  fi\n", words[""])
	b.WriteString("  case \"$cmd\" in\n")
	fmt.Fprintf(&b, "    \"\" | help) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(commandNames(), " "))
	b.WriteString("    completion) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n")
	dyn := dynamicArgs()
	for _, c := range sortedKeys(dyn) {
		fmt.Fprintf(&b, "    %s) IFS=$'\\n' COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" __complete %s \"${COMP_WORDS[@]:1:COMP_CWORD-1}\" 2>/dev/null)\" -- \"$cur\")) ;;\n", c, dyn[c])
	}
	fmt.Fprintf(&b, "    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n  esac\n}\ncomplete -F %s %s\n", fn, prog)
	return b.String()
}

func zshScript(prog string) string {
	valued, files := allFlags()
	fn := funcName(prog)
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s: source <(%s completion zsh)\n%s() {\n  local -a cmds vals\n  local cmd=\"\" i\n  cmds=(", prog, prog, prog, fn)
	for i, c := range commands() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "'%s:%s'", c.name, strings.ReplaceAll(c.summary, "'", ""))
	}
	fmt.Fprintf(&b, ")\n  case \"${words[CURRENT-1]}\" in\n    %s) _files; return ;;\n", strings.Join(files, "|"))
	for _, f := range sortedKeys(flagChoices()) {
		fmt.Fprintf(&b, "    %s) compadd %s; return ;;\n", f, flagChoices()[f])
	}
	fmt.Fprintf(&b, "    %s) return ;;\n  esac\n", strings.Join(valued, "|"))
	fmt.Fprintf(&b, "  for ((i = 2; i < CURRENT; i++)); do\n    case \"${words[i]}\" in\n      %s) ((i++)) ;;\n      -*) ;;\n      *) cmd=\"${words[i]}\"; break ;;\n    esac\n  done\n", strings.Join(valued, "|"))
	b.WriteString("  if [[ \"${words[CURRENT]}\" == -* ]]; then\n    case \"$cmd\" in\n")
	words := commandFlagWords()
	for _, c := range sortedKeys(words) {
		if c != "" {
			fmt.Fprintf(&b, "      %s) compadd -- %s ;;\n", c, words[c])
		}
	}
	fmt.Fprintf(&b, "      *) compadd -- %s ;;\n    esac\n    return\n  fi\n  case \"$cmd\" in\n", words[""])
	b.WriteString("    \"\" | help) _describe 'command' cmds ;;\n    completion) compadd bash zsh fish ;;\n")
	dyn := dynamicArgs()
	for _, c := range sortedKeys(dyn) {
		fmt.Fprintf(&b, "    %s) vals=(${(f)\"$(${words[1]} __complete %s ${words[2,CURRENT-1]} 2>/dev/null)\"}); compadd -a vals ;;\n", c, dyn[c])
	}
	fmt.Fprintf(&b, "    *) _files ;;\n  esac\n}\ncompdef %s %s\n", fn, prog)
	return b.String()
}

func fishScript(prog string) string {
	fn := funcName(prog)
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s: %s completion fish | source\ncomplete -c %s -f\n", prog, prog, prog)
	fmt.Fprintf(&b, "function %s_dyn\n    set -l words (commandline -opc)\n    $words[1] __complete $argv[1] $words[2..-1] 2>/dev/null\nend\n", fn)
	for _, c := range commands() {
		fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", prog, c.name, fishQuote(c.summary))
	}
	fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n", prog)
	fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from help' -a %s\n", prog, fishQuote(strings.Join(commandNames(), " ")))
	dyn := dynamicArgs()
	for _, c := range sortedKeys(dyn) {
		fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from %s' -a '(%s_dyn %s)'\n", prog, c, fn, dyn[c])
	}
	fmt.Fprintf(&b, "complete -c %s -l version -d 'the version and commit'\n", prog)
	for _, def := range flagDefs() {
		cond := fishCondition(def)
		fmt.Fprintf(&b, "complete -c %s%s%s\n", prog, cond, fishFlag(def))
	}
	return b.String()
}

// fishCondition limits a flag to the commands that take it (none for a
// global flag).
func fishCondition(def flagDef) string {
	var cmds []string
	all := true
	for _, c := range commands() {
		if def.accept(specOf(c.name)) {
			cmds = append(cmds, c.name)
		} else {
			all = false
		}
	}
	if all {
		return ""
	}
	return fmt.Sprintf(" -n '__fish_seen_subcommand_from %s'", strings.Join(cmds, " "))
}

// fishFlag is the -l/-s part of a flag's complete line, with its value.
func fishFlag(def flagDef) string {
	var b strings.Builder
	for _, n := range def.names {
		if len(n) == 1 {
			fmt.Fprintf(&b, " -s %s", n)
		} else {
			fmt.Fprintf(&b, " -l %s", n)
		}
	}
	switch def.value {
	case "":
	case "FILE", "DIR":
		b.WriteString(" -r -F")
	default:
		b.WriteString(" -x") // a value, not a file
		if ch, ok := flagChoices()["--"+def.names[0]]; ok {
			fmt.Fprintf(&b, " -a %s", fishQuote(ch))
		}
	}
	if def.value != "" {
		fmt.Fprintf(&b, " -d %s", fishQuote(def.value))
	}
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// completeNames is the hidden '__complete KIND [WORDS...]' the scripts
// run: for KIND tools, prompts or uris, those of the SOURCE among WORDS
// (the command line typed so far; its servers are started); for entries,
// the ids of the configured entries (nothing started). One a line. Other
// words, and flags it does not know, are ignored: the line is half
// written.
func (e *env) completeNames(ctx context.Context, argv []string) error {
	kinds := []string{"tools", "prompts", "uris", "entries"}
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
	if argv[0] == "entries" {
		for _, pe := range src.plan.Entries {
			fmt.Fprintln(e.Stdout, pe.Entry.ID)
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
		fmt.Fprintln(e.Stdout, name)
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
