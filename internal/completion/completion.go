// Package completion writes a command's completion scripts for bash, zsh
// and fish from a description of its command line (Spec): its commands,
// each command's flags and their values, and the names only a running
// config knows, which the scripts ask the program for by running it again
// as "PROG __complete KIND WORDS..." (WORDS: the line typed so far).
//
// The scripts register for Spec.Prog, the name the binary was run as, and
// call back the command as typed. They know three things of every such
// program: "help" takes a command's name, "completion" takes bash, zsh or
// fish, and --version (before any command) prints the version.
package completion

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is a program's command line as its completion scripts offer it.
type Spec struct {
	Prog     string    // the name the scripts register for
	Commands []Command // in the order the program lists them
	// Global are the flags offered before any command.
	Global []string
	// Flags are every flag of every command.
	Flags []Flag
	// Choices are the values a flag ("--scope", "-s") takes, space-separated.
	Choices map[string]string
	// Dynamic says what completes a command's arguments: the KIND the
	// scripts pass to "PROG __complete KIND WORDS...", one name a line back.
	Dynamic map[string]string
}

// Command is one subcommand.
type Command struct {
	Name    string
	Summary string   // one line; zsh and fish show it
	Flags   []string // the flags to offer after it, as "--name" or "-x"
}

// Flag is one flag of the program.
type Flag struct {
	Names []string // without dashes; a one-letter name is a short flag
	// Value names the flag's value ("FILE" and "DIR" complete file names);
	// "" for a flag that takes none.
	Value string
	// Commands are the commands that take the flag; nil for all of them.
	Commands []string
}

// dashed is name as typed: "-x" for a one-letter name, else "--name".
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// takesFile reports whether a flag's value is a file or directory.
func takesFile(value string) bool { return value == "FILE" || value == "DIR" }

// FuncName is the shell function the bash and zsh scripts define for
// prog: a name a shell takes, whatever prog is called.
func FuncName(prog string) string {
	return "_" + strings.Map(func(r rune) rune {
		if r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, prog)
}

// allFlags is every flag, as typed, that takes a value (for the scripts'
// case patterns); files are those whose value is a file or directory.
func (s Spec) allFlags() (valued, files []string) {
	for _, f := range s.Flags {
		for _, n := range f.Names {
			if f.Value == "" {
				continue
			}
			valued = append(valued, dashed(n))
			if takesFile(f.Value) {
				files = append(files, dashed(n))
			}
		}
	}
	return valued, files
}

// flagWords is, per command ("" for none yet), the flags to offer, space
// separated.
func (s Spec) flagWords() map[string]string {
	out := map[string]string{"": strings.Join(s.Global, " ")}
	for _, c := range s.Commands {
		out[c.Name] = strings.Join(c.Flags, " ")
	}
	return out
}

func (s Spec) commandNames() []string {
	var names []string
	for _, c := range s.Commands {
		names = append(names, c.Name)
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

// Bash is the bash script: source <(PROG completion bash).
func Bash(s Spec) string {
	prog := s.Prog
	valued, files := s.allFlags()
	var b strings.Builder
	fn := FuncName(prog)
	fmt.Fprintf(&b, "# bash completion for %s: source <(%s completion bash)\n%s() {\n", prog, prog, fn)
	b.WriteString(`  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i words IFS=$' \t\n'` + "\n")
	fmt.Fprintf(&b, "  for ((i = 1; i < COMP_CWORD; i++)); do\n    case \"${COMP_WORDS[i]}\" in\n      %s) ((i++)) ;;\n      -*) ;;\n      *) cmd=\"${COMP_WORDS[i]}\"; break ;;\n    esac\n  done\n", strings.Join(valued, "|"))
	fmt.Fprintf(&b, "  case \"$prev\" in\n    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", strings.Join(files, "|"))
	for _, f := range sortedKeys(s.Choices) {
		fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", f, s.Choices[f])
	}
	fmt.Fprintf(&b, "    %s) return ;;\n  esac\n", strings.Join(valued, "|"))
	b.WriteString("  if [[ \"$cur\" == -* ]]; then\n    case \"$cmd\" in\n")
	words := s.flagWords()
	for _, c := range sortedKeys(words) {
		if c != "" {
			fmt.Fprintf(&b, "      %s) words=%q ;;\n", c, words[c])
		}
	}
	fmt.Fprintf(&b, "      *) words=%q ;;\n    esac\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")); return\n  fi\n", words[""])
	b.WriteString("  case \"$cmd\" in\n")
	fmt.Fprintf(&b, "    \"\" | help) COMPREPLY=($(compgen -W %q -- \"$cur\")) ;;\n", strings.Join(s.commandNames(), " "))
	b.WriteString("    completion) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")) ;;\n")
	// The program's names (a server's URIs among them) are read as lines
	// and quoted: compgen -W would expand each ($(...), `...`, $VAR, ~)
	// and put it on the command line as it is.
	for _, c := range sortedKeys(s.Dynamic) {
		fmt.Fprintf(&b, "    %s) while IFS= read -r i; do [[ \"$i\" == \"$cur\"* ]] && COMPREPLY+=(\"$(printf '%%q' \"$i\")\"); done < <(\"${COMP_WORDS[0]}\" __complete %s \"${COMP_WORDS[@]:1:COMP_CWORD-1}\" 2>/dev/null) ;;\n", c, s.Dynamic[c])
	}
	fmt.Fprintf(&b, "    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n  esac\n}\ncomplete -F %s %s\n", fn, prog)
	return b.String()
}

// Zsh is the zsh script: source <(PROG completion zsh).
func Zsh(s Spec) string {
	prog := s.Prog
	valued, files := s.allFlags()
	fn := FuncName(prog)
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s: source <(%s completion zsh)\n%s() {\n  local -a cmds vals\n  local cmd=\"\" i\n  cmds=(", prog, prog, prog, fn)
	for i, c := range s.Commands {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "'%s:%s'", c.Name, strings.ReplaceAll(c.Summary, "'", ""))
	}
	fmt.Fprintf(&b, ")\n  case \"${words[CURRENT-1]}\" in\n    %s) _files; return ;;\n", strings.Join(files, "|"))
	for _, f := range sortedKeys(s.Choices) {
		fmt.Fprintf(&b, "    %s) compadd %s; return ;;\n", f, s.Choices[f])
	}
	fmt.Fprintf(&b, "    %s) return ;;\n  esac\n", strings.Join(valued, "|"))
	fmt.Fprintf(&b, "  for ((i = 2; i < CURRENT; i++)); do\n    case \"${words[i]}\" in\n      %s) ((i++)) ;;\n      -*) ;;\n      *) cmd=\"${words[i]}\"; break ;;\n    esac\n  done\n", strings.Join(valued, "|"))
	b.WriteString("  if [[ \"${words[CURRENT]}\" == -* ]]; then\n    case \"$cmd\" in\n")
	words := s.flagWords()
	for _, c := range sortedKeys(words) {
		if c != "" {
			fmt.Fprintf(&b, "      %s) compadd -- %s ;;\n", c, words[c])
		}
	}
	fmt.Fprintf(&b, "      *) compadd -- %s ;;\n    esac\n    return\n  fi\n  case \"$cmd\" in\n", words[""])
	b.WriteString("    \"\" | help) _describe 'command' cmds ;;\n    completion) compadd bash zsh fish ;;\n")
	for _, c := range sortedKeys(s.Dynamic) {
		fmt.Fprintf(&b, "    %s) vals=(${(f)\"$(${words[1]} __complete %s ${words[2,CURRENT-1]} 2>/dev/null)\"}); compadd -a vals ;;\n", c, s.Dynamic[c])
	}
	fmt.Fprintf(&b, "    *) _files ;;\n  esac\n}\ncompdef %s %s\n", fn, prog)
	return b.String()
}

// Fish is the fish script: PROG completion fish | source.
func Fish(s Spec) string {
	prog := s.Prog
	fn := FuncName(prog)
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s: %s completion fish | source\ncomplete -c %s -f\n", prog, prog, prog)
	fmt.Fprintf(&b, "function %s_dyn\n    set -l words (commandline -opc)\n    $words[1] __complete $argv[1] $words[2..-1] 2>/dev/null\nend\n", fn)
	for _, c := range s.Commands {
		fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", prog, c.Name, fishQuote(c.Summary))
	}
	fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n", prog)
	fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from help' -a %s\n", prog, fishQuote(strings.Join(s.commandNames(), " ")))
	for _, c := range sortedKeys(s.Dynamic) {
		fmt.Fprintf(&b, "complete -c %s -n '__fish_seen_subcommand_from %s' -a '(%s_dyn %s)'\n", prog, c, fn, s.Dynamic[c])
	}
	fmt.Fprintf(&b, "complete -c %s -l version -d 'the version and commit'\n", prog)
	for _, f := range s.Flags {
		fmt.Fprintf(&b, "complete -c %s%s%s\n", prog, fishCondition(f), s.fishFlag(f))
	}
	return b.String()
}

// fishCondition limits a flag to the commands that take it (none for a
// flag of every command).
func fishCondition(f Flag) string {
	if f.Commands == nil {
		return ""
	}
	return fmt.Sprintf(" -n '__fish_seen_subcommand_from %s'", strings.Join(f.Commands, " "))
}

// fishFlag is the -l/-s part of a flag's complete line, with its value.
func (s Spec) fishFlag(f Flag) string {
	var b strings.Builder
	for _, n := range f.Names {
		if len(n) == 1 {
			fmt.Fprintf(&b, " -s %s", n)
		} else {
			fmt.Fprintf(&b, " -l %s", n)
		}
	}
	switch {
	case f.Value == "":
	case takesFile(f.Value):
		b.WriteString(" -r -F")
	default:
		b.WriteString(" -x") // a value, not a file
		if ch, ok := s.Choices["--"+f.Names[0]]; ok {
			fmt.Fprintf(&b, " -a %s", fishQuote(ch))
		}
	}
	if f.Value != "" {
		fmt.Fprintf(&b, " -d %s", fishQuote(f.Value))
	}
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
