package cli

import (
	"context"
	"fmt"
	"strings"
)

// completion prints the completion script of a shell.
func (e *env) completion(argv []string) error {
	if len(argv) != 1 {
		return usagef("completion: want bash, zsh or fish")
	}
	var names, described []string
	for _, c := range commands() {
		names = append(names, c.name)
		described = append(described, fmt.Sprintf("'%s:%s'", c.name, strings.ReplaceAll(c.summary, "'", "")))
	}
	r := strings.NewReplacer("@COMMANDS@", strings.Join(names, " "), "@DESCRIBED@", strings.Join(described, " "), "@FLAGS@", completionFlags)
	switch argv[0] {
	case "bash":
		fmt.Fprint(e.Stdout, r.Replace(bashCompletion))
	case "zsh":
		fmt.Fprint(e.Stdout, r.Replace(zshCompletion))
	case "fish":
		fmt.Fprint(e.Stdout, r.Replace(fishCompletion))
		for _, c := range commands() {
			fmt.Fprintf(e.Stdout, "complete -c mcpbridge -n __fish_use_subcommand -a %s -d %q\n", c.name, c.summary)
		}
	default:
		return usagef("completion: unknown shell %q (want bash, zsh or fish)", argv[0])
	}
	return nil
}

// completeTools is the hidden '__complete tools [WORDS...]' the scripts
// run: the public tool names of the SOURCE among WORDS (the command line
// typed so far), one a line. Other words, and flags it does not know, are
// ignored: the line is half written.
func (e *env) completeTools(ctx context.Context, argv []string) error {
	if len(argv) == 0 || argv[0] != "tools" {
		return usagef("__complete: want tools")
	}
	var kept []string
	words := argv[1:]
	for i := 0; i < len(words); i++ {
		switch words[i] {
		case "--config", "--url", "--name", "--header":
			if i+1 < len(words) {
				kept = append(kept, words[i], words[i+1])
				i++
			}
		}
	}
	f, err := parseFlags("__complete", flagSpec{source: true}, kept)
	if err != nil {
		return err
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	f.json = true // no connection spinner in a completion
	b, err := e.open(ctx, src, f)
	if err != nil {
		return err
	}
	defer b.close()
	for _, t := range b.reg.List() {
		fmt.Fprintln(e.Stdout, t.Name)
	}
	return nil
}

const completionFlags = "--config --url --name --header --json --timings --limit --save-dir --stdio --http --raw-names " +
	"--ready-timeout --token-env --allow-origin --insecure-no-auth-on-network --env --transport --verbose --help --version"

const bashCompletion = `# bash completion for mcpbridge: source <(mcpbridge completion bash)
_mcpbridge() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --config|--url|--name|--header|--save-dir|--limit|--env|--transport|--token-env|--allow-origin|--ready-timeout) ((i++)) ;;
      -*) ;;
      *) cmd="${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$prev" in
    --config|--save-dir) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --transport) COMPREPLY=($(compgen -W "streamable-http sse" -- "$cur")); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "@FLAGS@" -- "$cur")); return
  fi
  case "$cmd" in
    "" | help) COMPREPLY=($(compgen -W "@COMMANDS@" -- "$cur")) ;;
    call)
      local IFS=$'\n'
      COMPREPLY=($(compgen -W "$(mcpbridge __complete tools "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur")) ;;
    completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _mcpbridge mcpbridge
`

const zshCompletion = `#compdef mcpbridge
# zsh completion for mcpbridge: source <(mcpbridge completion zsh)
_mcpbridge() {
  local -a cmds tools flags
  cmds=(@DESCRIBED@)
  flags=(@FLAGS@)
  case "${words[CURRENT-1]}" in
    --config|--save-dir) _files; return ;;
    --transport) compadd streamable-http sse; return ;;
  esac
  if [[ "${words[CURRENT]}" == -* ]]; then
    compadd -- $flags; return
  fi
  if (( CURRENT == 2 )); then
    _describe 'command' cmds; return
  fi
  case "${words[2]}" in
    help) _describe 'command' cmds ;;
    call)
      tools=(${(f)"$(mcpbridge __complete tools ${words[3,CURRENT-1]} 2>/dev/null)"})
      compadd -a tools ;;
    completion) compadd bash zsh fish ;;
    *) _files ;;
  esac
}
compdef _mcpbridge mcpbridge
`

const fishCompletion = `# fish completion for mcpbridge: mcpbridge completion fish | source
complete -c mcpbridge -f
complete -c mcpbridge -n '__fish_seen_subcommand_from call' -a '(mcpbridge __complete tools (commandline -opc)[2..-1] 2>/dev/null)'
complete -c mcpbridge -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
complete -c mcpbridge -l config -r -F -d 'a config file'
complete -c mcpbridge -l save-dir -r -F -d 'where images and audio are saved'
complete -c mcpbridge -l transport -r -a 'streamable-http sse'
complete -c mcpbridge -s v -l verbose -d "servers' log lines"
complete -c mcpbridge -s h -l help -d 'help for the command'
complete -c mcpbridge -l json -d 'machine-readable output'
complete -c mcpbridge -l url -r -d 'one Streamable HTTP server'
`
