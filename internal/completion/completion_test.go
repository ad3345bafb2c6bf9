package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// A name the program gives for completion (a server's resource URI, the
// server's to choose) is offered as the literal it is: bash runs nothing
// written in it, and it comes onto the command line quoted, so that a
// ";" in it ends no command.
func TestBashDynamicNamesAreLiterals(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to run the script: %v", err)
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	names := []string{"file:///notes.txt", "x$(touch " + mark + ")", "a;b c", "`touch " + mark + "`", "~root"}
	stub := filepath.Join(dir, "stub")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nprintf '%s\\n' "+shellQuote(names)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := Bash(Spec{Prog: "stub", Flags: []Flag{{Names: []string{"config"}, Value: "FILE"}}, Dynamic: map[string]string{"read": "uris"}})
	run := script + "\nCOMP_WORDS=(" + stub + " read \"\"); COMP_CWORD=2\n" + FuncName("stub") + "\n" +
		"for r in \"${COMPREPLY[@]}\"; do eval \"printf '%s\\n' $r\"; done\n"
	out, err := exec.Command(bash, "-c", run).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("completing ran a command written in a name")
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, names) {
		t.Errorf("the names offered, as the shell reads them back: %q, want %q", got, names)
	}
}

// shellQuote quotes each of words for sh, in single quotes.
func shellQuote(words []string) string {
	var q []string
	for _, w := range words {
		q = append(q, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	return strings.Join(q, " ")
}
