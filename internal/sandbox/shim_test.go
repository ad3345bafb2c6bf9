package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShellExecTargets(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"pyenv's shim", "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\nexport PYENV_ROOT=\"/home/ann/.pyenv\"\nexec \"/home/ann/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n",
			[]string{"/home/ann/.pyenv/libexec/pyenv"}},
		{"asdf's shim, unquoted", "#!/usr/bin/env bash\n# asdf-plugin: nodejs 20.0.0\nexec /home/ann/.asdf/bin/asdf exec \"node\" \"$@\" # asdf_allow: ' asdf '\n",
			[]string{"/home/ann/.asdf/bin/asdf"}},
		{"sh, single quotes, indented", "#!/bin/sh\nif true; then\n  exec '/opt/x/bin/x' \"$@\"\nfi\n", []string{"/opt/x/bin/x"}},
		{"a relative or variable target is not followed", "#!/bin/bash\nexec asdf exec node\nexec \"$HOME/.x/bin/x\"\nexec $X\n", nil},
		{"not a shell script", "#!/usr/bin/env node\nexec /home/ann/.pyenv/libexec/pyenv\n", nil},
		{"no #! line", "exec /home/ann/.pyenv/libexec/pyenv\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shellExecTargets([]byte(tt.script))); diff != "" {
				t.Errorf("shellExecTargets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerRoot(t *testing.T) {
	const home = "/home/ann"
	tests := []struct {
		name, path string
		env        []string
		want       string
	}{
		{"pyenv's shim", home + "/.pyenv/shims/python3", nil, home + "/.pyenv"},
		{"nvm's node", home + "/.nvm/versions/node/v22.1.0/bin/node", nil, home + "/.nvm"},
		{"moved by its variable", "/opt/pyenv/libexec/pyenv", []string{"PYENV_ROOT=/opt/pyenv"}, "/opt/pyenv"},
		{"another directory of home", home + "/.local/bin/uvx", nil, ""},
		{"a file directly in home", home + "/.pyenv", nil, home + "/.pyenv"},
		{"outside home", "/usr/bin/python3", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := managerRoot(tt.path, tt.env, home); got != tt.want {
				t.Errorf("managerRoot(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}
