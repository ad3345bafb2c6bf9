package cli

import (
	"os"

	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// Each command's synopsis (the README's command reference, which
// TestReadmeCommandReference holds to help's) names every flag of the
// command's own: only the flags every command takes, SOURCE's (which its
// help explains under SOURCE) and a flag named by another of its names
// are left out.
func TestSynopsisNamesEveryFlag(t *testing.T) {
	global := map[string]bool{"--help": true, "--verbose": true, "--log-format": true}
	sourceFlags := map[string]bool{"--config": true, "--url": true, "--name": true, "--header": true, "--oauth-headless": true, "--elicit": true}
	shortFlag := regexp.MustCompile(`(^|[\s\[(|])(-[a-zA-Z])\b`)
	for _, c := range commands() {
		named := map[string]bool{}
		for _, m := range append(longFlag.FindAllStringSubmatch(c.synopsis, -1), shortFlag.FindAllStringSubmatch(c.synopsis, -1)...) {
			named[m[2]] = true
		}
		for _, def := range flagDefs() {
			if !def.accept(specOf(c.name)) {
				continue
			}
			var forms []string
			for _, n := range def.names {
				forms = append(forms, map[bool]string{true: "-", false: "--"}[len(n) == 1]+n)
			}
			in := func(set map[string]bool) bool {
				return slices.ContainsFunc(forms, func(f string) bool { return set[f] })
			}
			if in(global) || in(sourceFlags) && specOf(c.name).source || in(named) {
				continue
			}
			t.Errorf("%s accepts %s, but its synopsis does not name it: mcpbridge %s", c.name, strings.Join(forms, "/"), c.synopsis)
		}
	}
}

// listedFlag is a line of a help's flag list: two spaces, then the flag
// and its aliases ("  -v, --verbose   …", "  --yes, -y   …").
var listedFlag = regexp.MustCompile(`^  (-{1,2}[A-Za-z][A-Za-z-]*(?:, -{1,2}[A-Za-z][A-Za-z-]*)*)`)

// No command's help lists a flag twice, by any of its names: call's and
// agent's listed --elicit among their own flags and again among
// SOURCE's.
func TestNoHelpListsAFlagTwice(t *testing.T) {
	for _, c := range commands() {
		listed := map[string]string{} // a flag's first name: its line
		for line := range strings.Lines(c.helpText()) {
			m := listedFlag.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			keys := map[string]string{} // "-v, --verbose" is one flag
			for name := range strings.SplitSeq(m[1], ", ") {
				keys[firstName(strings.TrimLeft(name, "-"))] = name
			}
			for key, name := range keys {
				if first, ok := listed[key]; ok {
					t.Errorf("%s's help lists %s twice:\n%s%s", c.name, name, first, line)
				}
				listed[key] = line
			}
		}
	}
}

// firstName is the first name of the flag called name ("v" is "v",
// "verbose" too), or name when no flag is called so.
func firstName(name string) string {
	for _, d := range flagDefs() {
		if slices.Contains(d.names, name) {
			return d.names[0]
		}
	}
	return name
}
