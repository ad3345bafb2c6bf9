package completion_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/completion"
)

// The fish script of a program with one command, whose argument the
// program itself completes ("hello __complete names WORDS...").
func ExampleFish() {
	fmt.Print(completion.Fish(completion.Spec{
		Prog:     "hello",
		Commands: []completion.Command{{Name: "greet", Summary: "say hello", Flags: []string{"--to", "--loud"}}},
		Global:   []string{"--version"},
		Flags: []completion.Flag{
			{Names: []string{"to", "t"}, Value: "NAME", Commands: []string{"greet"}},
			{Names: []string{"config"}, Value: "FILE"},
		},
		Dynamic: map[string]string{"greet": "names"},
	}))
	// Output:
	// # fish completion for hello: hello completion fish | source
	// complete -c hello -f
	// function _hello_dyn
	//     set -l words (commandline -opc)
	//     $words[1] __complete $argv[1] $words[2..-1] 2>/dev/null
	// end
	// complete -c hello -n __fish_use_subcommand -a greet -d 'say hello'
	// complete -c hello -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
	// complete -c hello -n '__fish_seen_subcommand_from help' -a 'greet'
	// complete -c hello -n '__fish_seen_subcommand_from greet' -a '(_hello_dyn names)'
	// complete -c hello -l version -d 'the version and commit'
	// complete -c hello -n '__fish_seen_subcommand_from greet' -l to -s t -x -d 'NAME'
	// complete -c hello -l config -r -F -d 'FILE'
}
