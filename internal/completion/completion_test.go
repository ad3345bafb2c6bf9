package completion

import (
	"strings"
	"testing"
)

// A program installed under a name no shell function may take still gets
// a function of its own.
func TestFuncName(t *testing.T) {
	for prog, want := range map[string]string{"mcpbridge": "_mcpbridge", "mcpb-dev": "_mcpb_dev", "a.b c": "_a_b_c"} {
		if got := FuncName(prog); got != want {
			t.Errorf("FuncName(%q) = %q, want %q", prog, got, want)
		}
	}
}

// The bash script skips the value after a flag that takes one when it
// looks for the command, completes file names after FILE and DIR flags,
// and offers a flag's choices after it.
func TestBashFlagValues(t *testing.T) {
	got := Bash(Spec{
		Prog: "p",
		Flags: []Flag{
			{Names: []string{"config"}, Value: "FILE"},
			{Names: []string{"scope", "s"}, Value: "S"},
			{Names: []string{"json"}},
		},
		Choices: map[string]string{"--scope": "a b"},
	})
	for _, want := range []string{
		"      --config|--scope|-s) ((i++)) ;;\n",
		"    --config) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n",
		"    --scope) COMPREPLY=($(compgen -W \"a b\" -- \"$cur\")); return ;;\n",
		"complete -F _p p\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// A flag no command takes is limited to none, not offered everywhere.
func TestFishFlagOfNoCommand(t *testing.T) {
	got := Fish(Spec{Prog: "p", Flags: []Flag{{Names: []string{"x"}, Commands: []string{}}}})
	if want := "complete -c p -n '__fish_seen_subcommand_from ' -s x\n"; !strings.HasSuffix(got, want) {
		t.Errorf("got:\n%s\nwant it to end with %q", got, want)
	}
}
