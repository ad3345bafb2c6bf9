package cli

import (
	"os"

	"github.com/google/go-cmp/cmp"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var longFlag = regexp.MustCompile(`(^|[\s\[(|,])(--[a-z][a-z-]*)`)

// Each command's help names exactly the flags it accepts (which the
// completion scripts offer): a flag added to a command shows in its help,
// and its help promises none it refuses.
func TestHelpNamesEveryFlag(t *testing.T) {
	for _, c := range commands() {
		accepted, _ := flagsOf(c.name)
		help := c.helpText()
		var named []string
		for _, m := range longFlag.FindAllStringSubmatch(help, -1) {
			named = append(named, m[2])
		}
		for _, f := range accepted {
			if strings.HasPrefix(f, "--") && !slices.Contains(named, f) {
				t.Errorf("%s accepts %s, but its help does not name it", c.name, f)
			}
		}
		for _, f := range named {
			if f != "--version" && !slices.Contains(accepted, f) {
				t.Errorf("%s's help names %s, which it does not accept", c.name, f)
			}
		}
	}
}

// Every flag is some command's.
func TestEveryFlagHasACommand(t *testing.T) {
	for _, def := range flagDefs() {
		used := false
		for _, c := range commands() {
			used = used || def.accept(specOf(c.name))
		}
		if !used {
			t.Errorf("no command accepts --%s", def.names[0])
		}
	}
}

// The README's command reference is 'mcpbridge help': the same commands,
// in the same order, each with its synopsis (spacing and comments aside).
func TestReadmeCommandReference(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "## Using it\n\n```sh\n")
	if !ok {
		t.Fatal("README.md has no command reference under '## Using it'")
	}
	block, _, _ = strings.Cut(block, "```")
	var got []string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		switch {
		case strings.HasPrefix(line, "mcpbridge "):
			got = append(got, line)
		case strings.HasPrefix(line, " ") && len(got) > 0:
			got[len(got)-1] += " " + line
		}
	}
	var want []string
	for _, c := range commands() {
		want = append(want, "mcpbridge "+c.synopsis)
	}
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README.md's command reference (-help +README):\n%s", diff)
	}
}
